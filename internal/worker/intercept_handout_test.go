package worker

import (
	"sync"
	"testing"

	"github.com/IBM/sarama"

	"github.com/zkgroup/kafka/internal/fence"
	"github.com/zkgroup/kafka/internal/fetch"
)

// countingInterceptor counts OnConsume per offset.
type countingInterceptor struct {
	mu   sync.Mutex
	seen map[int64]int
}

func (c *countingInterceptor) OnConsume(m *sarama.ConsumerMessage) {
	c.mu.Lock()
	c.seen[m.Offset]++
	c.mu.Unlock()
}

func (c *countingInterceptor) counts() map[int64]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make(map[int64]int, len(c.seen))
	for o, n := range c.seen {
		out[o] = n
	}
	return out
}

// interceptEngine is a fetch engine reading t/0 through the batch feed
// from a mock broker holding offsets 0 to 2, with ic as the consumer's
// interceptor.
func interceptEngine(t *testing.T, ic sarama.ConsumerInterceptor) *fetch.Engine {
	broker := sarama.NewMockBroker(t, 1)
	t.Cleanup(broker.Close)
	res := &sarama.FetchResponse{Version: 12} // what the feed asks for at V2_8_0_0
	for o := int64(0); o < 3; o++ {
		res.AddRecord("t", 0, nil, sarama.StringEncoder("m"), o)
	}
	res.GetBlock("t", 0).HighWaterMarkOffset = 3
	broker.SetHandlerByMap(map[string]sarama.MockResponse{
		"MetadataRequest": sarama.NewMockMetadataResponse(t).
			SetBroker(broker.Addr(), broker.BrokerID()).
			SetLeader("t", 0, broker.BrokerID()),
		"FetchRequest": sarama.NewMockWrapper(res),
	})
	conf := sarama.NewConfig()
	conf.Version = sarama.V2_8_0_0
	conf.ApiVersionsRequest = false // the mock broker does not answer it
	conf.Metadata.Retry.Max = 0
	conf.Consumer.Interceptors = []sarama.ConsumerInterceptor{ic}
	client, err := sarama.NewClient([]string{broker.Addr()}, conf)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = client.Close() })
	e := fetch.NewEngine(fetch.Config{Config: conf, Batches: true}, fetch.Deps{Client: client})
	t.Cleanup(e.Close)
	return e
}

// OnConsume runs once per message handed to the application, not per
// message fetched. A batch of 0 to 2 arrives; 0 is read, then a seek back
// to 0 drops the rest of the batch (unread in a claim's buffer: taken
// back); the next pass hands out 0, 1 and 2. The interceptor must have
// seen 0 twice (read twice), 1 and 2 once. It ran on the batch when it was
// fetched: 1 and 2 twice, once for the batch the seek dropped.
func TestInterceptorsRunOncePerHandOut(t *testing.T) {
	for _, capacity := range []int{0, 4} { // Messages(), a handler's claim
		ic := &countingInterceptor{seen: map[int64]int{}}
		e := interceptEngine(t, ic)
		gate := fence.NewGate()
		w := newTestWorker(Deps{Session: fakeSession{id: 7}, Gate: gate, HandingOut: e.HandingOut})
		t.Cleanup(w.cancel)
		w.out = make(chan *sarama.ConsumerMessage, capacity)
		owned := adoptAt(w, testClaim(7), 0)
		w.owned = owned
		p := e.Partition(w.ctx, "t", 0, nil, nil)
		pass := func(read int, seekTo int64) {
			t.Helper()
			src, err := p.Open(0)
			if err != nil {
				t.Fatal(err)
			}
			defer src.Close()
			res := make(chan pumpResult, 1)
			go func() {
				r, e, ended := w.pump(owned, src, 0)
				res <- pumpResult{r, e, ended}
			}()
			for i := 0; i < read; i++ {
				if m := <-w.out; m.Offset != int64(i) {
					t.Fatalf("capacity %d: got offset %d, want %d", capacity, m.Offset, i)
				}
			}
			w.inbox.SeekTo(seekTo)
			if r := await(t, res); r.ended || r.e != Seek {
				t.Fatalf("capacity %d: pump = %+v, want the seek", capacity, r)
			}
		}
		pass(1, 0)
		pass(3, 3)
		got := ic.counts()
		for o, want := range map[int64]int{0: 2, 1: 1, 2: 1} {
			if got[o] != want {
				t.Errorf("capacity %d: OnConsume ran %d times for offset %d, read %d times (all: %v)", capacity, got[o], o, want, got)
			}
		}
	}
}
