package integration

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/IBM/sarama"
	metrics "github.com/rcrowley/go-metrics"

	"github.com/zkgroup/kafka/consumergroup"
	"github.com/zkgroup/kafka/internal/testenv"
)

// TestIntegrationCompressedTopics: a topic produced with each compression
// codec sarama supports is read through the batch feed (the default
// config), both through Messages()+CommitUpto and through Consume with a
// handler: every produced message is delivered once, in order per
// partition, with its offset, key, value and headers, and the committed
// offsets end at each partition's end. No message goes through sarama's
// partition consumer (no feed fell back, see fellBack), so the feed's own
// parsing of the decompressed record batches is what is checked.
func TestIntegrationCompressedTopics(t *testing.T) {
	testenv.Integration(t)
	codecs := []sarama.CompressionCodec{
		sarama.CompressionNone, sarama.CompressionGZIP, sarama.CompressionSnappy,
		sarama.CompressionLZ4, sarama.CompressionZSTD,
	}
	for _, codec := range codecs {
		t.Run(codec.String(), func(t *testing.T) {
			topic := newTopic(t, 4)
			want := produceRecords(t, topic, 2000, func(cfg *sarama.Config) {
				cfg.Producer.Compression = codec
				cfg.Version = sarama.V2_8_0_0 // zstd needs 2.1 or later
			})
			for _, path := range consumePaths {
				t.Run(path.name, func(t *testing.T) {
					cfg := testConfig()
					if !cfg.Fetch.Batches {
						t.Fatal("the default config does not use the batch feed")
					}
					reg := metrics.NewRegistry()
					cfg.MetricRegistry = reg
					group := testenv.UniqueName("g")
					got := path.read(t, group, topic, want.total(), cfg, func() {
						if n := fellBack(reg); n > 0 {
							t.Errorf("%d feeds fell back to sarama's partition consumer: not every message came through the feed", n)
						}
					})
					checkRecords(t, want, got)
					checkCommittedEnds(t, group, topic, want)
				})
			}
		})
	}
}

// TestIntegrationReadCommitted: with Consumer.IsolationLevel ReadCommitted
// (which the batch feed leaves to sarama's partition consumer), the
// messages of a committed transaction are delivered and those of an
// aborted one, produced between two committed ones, are not; in order per
// partition, through both consume paths, and the committed offsets end
// after the last delivered message of each partition.
func TestIntegrationReadCommitted(t *testing.T) {
	testenv.Integration(t)
	topic := newTopic(t, 4)
	p := newProducer(t, func(cfg *sarama.Config) { cfg.Producer.Transaction.ID = testenv.UniqueName("tx") })
	defer p.Close()
	want := newProducedRecords()
	for i, commit := range []bool{true, false, true} {
		if err := p.BeginTxn(); err != nil {
			t.Fatalf("begin transaction %d: %v", i, err)
		}
		msgs := recordMessages(topic, i*1000, 300)
		if err := p.SendMessages(msgs); err != nil {
			t.Fatalf("produce in transaction %d: %v", i, err)
		}
		var err error
		if commit {
			err = p.CommitTxn()
			want.add(msgs)
		} else {
			err = p.AbortTxn()
		}
		if err != nil {
			t.Fatalf("end transaction %d (commit %v): %v", i, commit, err)
		}
	}
	for _, path := range consumePaths {
		t.Run(path.name, func(t *testing.T) {
			cfg := testConfig()
			cfg.Consumer.IsolationLevel = sarama.ReadCommitted
			reg := metrics.NewRegistry()
			cfg.MetricRegistry = reg
			group := testenv.UniqueName("g")
			got := path.read(t, group, topic, want.total(), cfg, func() {
				// Here every message comes through sarama's partition
				// consumer, which updates consumer-batch-size.
				if h, _ := reg.Get("consumer-batch-size").(metrics.Histogram); h == nil || h.Count() == 0 {
					t.Error("sarama's partition consumer parsed no fetch response under read_committed")
				}
			})
			checkRecords(t, want, got)
			checkCommittedEnds(t, group, topic, want)
		})
	}
}

// fellBack returns how many partitions' passes the batch feed handed to
// sarama's partition consumer (zkgroup-feed-fallbacks): with the batch
// feed on, the one way messages go through sarama's consumer.
// consumer-batch-size tells nothing here: the feed updates it too.
func fellBack(reg metrics.Registry) int64 {
	return countOf(reg, "zkgroup-feed-fallbacks")
}

// producedRecords are the messages a test produced, by partition, in
// offset order.
type producedRecords map[int32][]*sarama.ProducerMessage

func newProducedRecords() producedRecords { return make(producedRecords) }

func (p producedRecords) add(msgs []*sarama.ProducerMessage) {
	for _, m := range msgs {
		p[m.Partition] = append(p[m.Partition], m)
	}
}

func (p producedRecords) total() int {
	n := 0
	for _, ms := range p {
		n += len(ms)
	}
	return n
}

// recordMessages returns n messages to topic, numbered from first: a key
// (none for every tenth), a compressible value of about 300 bytes and two
// headers, so every field a record batch carries is checked.
func recordMessages(topic string, first, n int) []*sarama.ProducerMessage {
	msgs := make([]*sarama.ProducerMessage, 0, n)
	for i := first; i < first+n; i++ {
		m := &sarama.ProducerMessage{
			Topic: topic,
			Value: sarama.StringEncoder(fmt.Sprintf("message %d: %s", i, strings.Repeat("payload ", 36))),
			Headers: []sarama.RecordHeader{
				{Key: []byte("index"), Value: []byte(fmt.Sprint(i))},
				{Key: []byte("empty"), Value: []byte{}},
			},
		}
		if i%10 != 0 {
			m.Key = sarama.StringEncoder(fmt.Sprintf("key-%d", i))
		}
		msgs = append(msgs, m)
	}
	return msgs
}

// produceRecords produces n recordMessages round-robin with the test
// producer's config changed by configure, 500 at a time (so each
// partition's record batches hold many records), and returns them with the
// partitions and offsets the broker gave them.
func produceRecords(t *testing.T, topic string, n int, configure func(*sarama.Config)) producedRecords {
	t.Helper()
	p := newProducer(t, configure)
	defer p.Close()
	msgs := recordMessages(topic, 0, n)
	sendAll(t, p, msgs)
	want := newProducedRecords()
	want.add(msgs)
	return want
}

// consumePath reads n messages of topic under group with cfg, through one
// of the group's two APIs, and returns them by partition in delivery
// order. beforeClose runs once all n were delivered, before the group is
// closed; reading goes on for a second first, so a message delivered twice
// or one too many is seen.
type consumePath struct {
	name string
	read func(t *testing.T, group, topic string, n int, cfg *consumergroup.Config, beforeClose func()) map[int32][]*sarama.ConsumerMessage
}

// consumePaths are Messages()+CommitUpto and Consume with a handler.
var consumePaths = []consumePath{
	{"messages", readAllMessages},
	{"handler", readAllHandler},
}

// quietAfterLast is how long a consume path reads on after the last
// expected message, to see any extra delivery.
const quietAfterLast = time.Second

// deliveries collects delivered messages by partition.
type deliveries struct {
	mu     sync.Mutex
	byPart map[int32][]*sarama.ConsumerMessage
	n      int
	all    chan struct{} // closed once want were collected
	want   int
}

func newDeliveries(want int) *deliveries {
	return &deliveries{byPart: make(map[int32][]*sarama.ConsumerMessage), all: make(chan struct{}), want: want}
}

func (d *deliveries) add(m *sarama.ConsumerMessage) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.byPart[m.Partition] = append(d.byPart[m.Partition], m)
	d.n++
	if d.n == d.want {
		close(d.all)
	}
}

// wait waits for all wanted deliveries, then quietAfterLast more.
func (d *deliveries) wait(t *testing.T) {
	t.Helper()
	select {
	case <-d.all:
	case <-time.After(60 * time.Second):
		d.mu.Lock()
		defer d.mu.Unlock()
		t.Fatalf("delivered %d of %d messages in 60 s", d.n, d.want)
	}
	time.Sleep(quietAfterLast)
}

func (d *deliveries) result() map[int32][]*sarama.ConsumerMessage {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.byPart
}

// readAllMessages is the consumePath through Messages() and CommitUpto.
func readAllMessages(t *testing.T, group, topic string, n int, cfg *consumergroup.Config, beforeClose func()) map[int32][]*sarama.ConsumerMessage {
	cg := join(t, group, []string{topic}, cfg)
	d := newDeliveries(n)
	done := drainGroup(cg, func(m *sarama.ConsumerMessage) {
		d.add(m)
		_ = cg.CommitUpto(m)
	}, func(err error) { t.Logf("error: %v", err) })
	d.wait(t)
	beforeClose()
	closeGroup(t, cg)
	<-done
	return d.result()
}

// recordingHandler records and marks every message of every claim.
type recordingHandler struct{ d *deliveries }

func (h recordingHandler) Setup(sarama.ConsumerGroupSession) error   { return nil }
func (h recordingHandler) Cleanup(sarama.ConsumerGroupSession) error { return nil }
func (h recordingHandler) ConsumeClaim(s sarama.ConsumerGroupSession, c sarama.ConsumerGroupClaim) error {
	for m := range c.Messages() {
		h.d.add(m)
		s.MarkMessage(m, "")
	}
	return nil
}

// readAllHandler is the consumePath through Consume with a
// recordingHandler; a Consume error fails the test.
func readAllHandler(t *testing.T, group, topic string, n int, cfg *consumergroup.Config, beforeClose func()) map[int32][]*sarama.ConsumerMessage {
	g, err := consumergroup.NewConsumerGroup(group, []string{testenv.ZKAddr()}, cfg)
	if err != nil {
		t.Fatalf("new group: %v", err)
	}
	d := newDeliveries(n)
	ctx, cancel := context.WithCancel(context.Background())
	consumed := make(chan error, 1)
	go func() {
		var err error
		for ctx.Err() == nil && err == nil {
			err = g.Consume(ctx, []string{topic}, recordingHandler{d})
		}
		consumed <- err
	}()
	go func() {
		for err := range g.Errors() {
			t.Logf("error: %v", err)
		}
	}()
	d.wait(t)
	beforeClose()
	cancel()
	if err := <-consumed; err != nil && ctx.Err() == nil {
		t.Errorf("consume: %v", err)
	}
	if err := g.Close(); err != nil {
		t.Errorf("close: %v", err)
	}
	return d.result()
}

// checkRecords compares the delivered messages with the produced ones,
// partition by partition, in order: same offsets, keys, values, headers.
func checkRecords(t *testing.T, want producedRecords, got map[int32][]*sarama.ConsumerMessage) {
	t.Helper()
	for p := range got {
		if _, ok := want[p]; !ok {
			t.Errorf("partition %d: %d messages delivered, none produced", p, len(got[p]))
		}
	}
	for p, ws := range want {
		gs := got[p]
		if len(gs) != len(ws) {
			t.Errorf("partition %d: %d messages delivered, want %d", p, len(gs), len(ws))
		}
		for i := range min(len(gs), len(ws)) {
			if err := sameRecord(ws[i], gs[i]); err != nil {
				t.Errorf("partition %d, message %d: %v", p, i, err)
				break
			}
		}
	}
}

// sameRecord says how g differs from the produced w, or nil.
func sameRecord(w *sarama.ProducerMessage, g *sarama.ConsumerMessage) error {
	if g.Offset != w.Offset {
		return fmt.Errorf("offset %d, want %d", g.Offset, w.Offset)
	}
	wantKey, _ := encoded(w.Key)
	wantValue, _ := encoded(w.Value)
	if !bytes.Equal(g.Key, wantKey) || (g.Key == nil) != (wantKey == nil) {
		return fmt.Errorf("offset %d: key %q, want %q", g.Offset, g.Key, wantKey)
	}
	if !bytes.Equal(g.Value, wantValue) {
		return fmt.Errorf("offset %d: value %q, want %q", g.Offset, g.Value, wantValue)
	}
	if len(g.Headers) != len(w.Headers) {
		return fmt.Errorf("offset %d: %d headers, want %d", g.Offset, len(g.Headers), len(w.Headers))
	}
	for i, h := range w.Headers {
		if !bytes.Equal(g.Headers[i].Key, h.Key) || !bytes.Equal(g.Headers[i].Value, h.Value) {
			return fmt.Errorf("offset %d: header %d %q=%q, want %q=%q", g.Offset, i, g.Headers[i].Key, g.Headers[i].Value, h.Key, h.Value)
		}
	}
	return nil
}

// encoded returns e's bytes, nil for no encoder.
func encoded(e sarama.Encoder) ([]byte, error) {
	if e == nil {
		return nil, nil
	}
	return e.Encode()
}

// checkCommittedEnds checks that group's committed offset of each
// partition is the one after its last produced (and delivered) message.
func checkCommittedEnds(t *testing.T, group, topic string, want producedRecords) {
	t.Helper()
	kz := zkClient(t)
	for p, ws := range want {
		end := ws[len(ws)-1].Offset + 1
		got, err := kz.Consumergroup(group).FetchOffset(topic, p)
		if err != nil || got != end {
			t.Errorf("partition %d: committed offset %d (%v), want %d", p, got, err, end)
		}
	}
}
