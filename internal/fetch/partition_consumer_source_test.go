package fetch

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/IBM/sarama"
)

// fakePartitionConsumer serves messages from a channel the test fills;
// a Source uses nothing else of it but its close.
type fakePartitionConsumer struct {
	sarama.PartitionConsumer
	msgs      chan *sarama.ConsumerMessage
	errs      chan *sarama.ConsumerError
	closeOnce sync.Once
}

func newFakePartitionConsumer(offsets ...int64) *fakePartitionConsumer {
	pc := &fakePartitionConsumer{
		msgs: make(chan *sarama.ConsumerMessage, len(offsets)+8),
		errs: make(chan *sarama.ConsumerError, 1),
	}
	for _, m := range prefixOf(offsets...) {
		pc.msgs <- m
	}
	return pc
}

func (pc *fakePartitionConsumer) Messages() <-chan *sarama.ConsumerMessage { return pc.msgs }
func (pc *fakePartitionConsumer) Errors() <-chan *sarama.ConsumerError     { return pc.errs }
func (pc *fakePartitionConsumer) HighWaterMarkOffset() int64               { return 0 }
func (pc *fakePartitionConsumer) AsyncClose() {
	pc.closeOnce.Do(func() { close(pc.msgs); close(pc.errs) })
}

// The directly fetched prefix goes out while the partition consumer is
// still opening; its messages follow once it is open.
func TestPrefixBeforeOpen(t *testing.T) {
	p := testPartition(t, nil)
	src := p.prefixSource(prefixOf(0, 1))
	next(t, src, 0)
	next(t, src, 1)
	src.pc = newFakePartitionConsumer(2, 3)
	close(src.ready)
	next(t, src, 2)
	next(t, src, 3)
	if err := src.Close(); err != nil {
		t.Fatalf("Close = %v", err)
	}
}

// A background open that fails after the prefix went out ends the source
// after the prefix, and the partition's next Open opens plainly, with
// open's checks.
func TestFailedOpenEndsAfterPrefix(t *testing.T) {
	p := testPartition(t, nil)
	src := p.prefixSource(prefixOf(5, 6))
	next(t, src, 5)
	next(t, src, 6)
	src.openErr = errors.New("leader not available")
	close(src.ready)
	if m, err := src.Next(nil); !errors.Is(err, ErrSourceEnded) {
		t.Fatalf("Next = %v, %v after the failed open, want ErrSourceEnded", m, err)
	}
	if src.Close() == nil {
		t.Error("close of a failed open reported no error")
	}
	if !p.failed {
		t.Error("after a failed open the next Open would not open plainly")
	}
}

// fakeConsumer opens fake partition consumers and counts the opens.
type fakeConsumer struct {
	mu    sync.Mutex
	opens []int64
}

func (c *fakeConsumer) ConsumePartition(_ string, _ int32, offset int64) (sarama.PartitionConsumer, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.opens = append(c.opens, offset)
	return newFakePartitionConsumer(offset), nil
}

// noLeader is a client that knows no leader: every direct fetch fails
// with an error retrying does not mend.
type noLeader struct{}

func (noLeader) Leader(string, int32) (*sarama.Broker, error) { return nil, errors.New("no leader") }
func (noLeader) RefreshMetadata(...string) error              { return nil }

// Open picks the batch feed; once it fails, the partition's next Open
// reads through sarama's partition consumer, and the one after that
// through the feed again.
func TestOpenFallsBackFromFeed(t *testing.T) {
	conf := sarama.NewConfig()
	conf.Version = sarama.V2_8_0_0
	consumer := &fakeConsumer{}
	e := NewEngine(Config{Config: conf, Batches: true}, Deps{Client: noLeader{}, Consumer: consumer})
	defer e.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	p := e.Partition(ctx, "t", 0, nil, nil)

	src, err := p.Open(3)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := src.(*feedSource); !ok {
		t.Fatalf("Open with Batches = %T, want the batch feed", src)
	}
	if m, err := src.Next(nil); !errors.Is(err, ErrSourceEnded) {
		t.Fatalf("Next = %v, %v with no leader, want ErrSourceEnded", m, err)
	}
	if src.Close() == nil {
		t.Fatal("the failed feed closed without its error")
	}

	src, err = p.Open(3)
	if err != nil {
		t.Fatal(err)
	}
	next(t, src, 3)
	if err := src.Close(); err != nil {
		t.Fatal(err)
	}
	if len(consumer.opens) != 1 || consumer.opens[0] != 3 {
		t.Fatalf("sarama's partition consumer opened at %v, want once at 3", consumer.opens)
	}

	src, err = p.Open(4)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := src.(*feedSource); !ok {
		t.Fatalf("Open after sarama's pass = %T, want the batch feed again", src)
	}
	_ = src.Close()
}
