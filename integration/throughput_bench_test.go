package integration

import (
	"context"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/IBM/sarama"

	"github.com/zkgroup/kafka/consumergroup"
	"github.com/zkgroup/kafka/internal/testenv"
)

// BenchmarkIntegrationThroughput compares, in one run, reading a 4-partition
// topic of N messages (ZKGROUP_BENCH_MESSAGES, default 500000) from start to
// end:
//
//   - sarama: bare sarama PartitionConsumers, one reader goroutine each;
//   - sarama-one-reader: the same, read by one goroutine through one channel,
//     the shape of an application that processes serially;
//   - consumergroup: JoinConsumerGroup, CommitUpto on every message, Close;
//     msgs/s-to-last leaves out the Close (final commit and release), as
//     the readers above have none.
//   - consumergroup-handler: NewConsumerGroup, Consume with a handler that
//     calls MarkMessage on every message (one goroutine per claim), Close;
//   - sarama-group: sarama's own broker-coordinated group
//     (sarama.NewConsumerGroup on the same broker, the same fetch wait as
//     the groups above) with the same handler;
//   - paired-messages: consumergroup (to the last message) and
//     sarama-one-reader again, interleaved, reporting
//     messages/one-reader;
//   - paired: consumergroup-handler, sarama-group and sarama again,
//     interleaved (one of each per iteration, in rotating order), reporting
//     the handler path's throughput as a ratio of sarama's group
//     (handler/sarama-group) and of the bare partition consumers
//     (handler/sarama): measured side by side, so load from elsewhere on
//     the machine weighs on all of them alike. A fourth run,
//     handler-unbatched, is consumergroup-handler with Fetch.Batches
//     false: each partition read through sarama's partition consumer, one
//     message at a time, instead of whole fetched batches
//     (handler/handler-unbatched above 1 is what the batches gain).
//
// Each iteration includes its setup and teardown (for the groups: join,
// claim, and the final commit and release). msgs/s is N*iterations over the
// total time; the group paths also report the mean time to the first message
// (first-ms), from the last mark to the end of Close (end-ms), and the rate
// in between (stream-msgs/s). Run:
//
//	go test -run=NONE -bench=IntegrationThroughput -benchtime=3x -count=3 ./integration/
func BenchmarkIntegrationThroughput(b *testing.B) {
	testenv.Integration(b)
	n := 500_000
	if v, err := strconv.Atoi(os.Getenv("ZKGROUP_BENCH_MESSAGES")); err == nil && v > 0 {
		n = v
	}
	topic := newTopic(b, 4)
	counts := produce(b, topic, n)

	measure := func(b *testing.B, once func(b *testing.B)) {
		b.ResetTimer()
		start := time.Now()
		for i := 0; i < b.N; i++ {
			once(b)
		}
		b.ReportMetric(float64(n*b.N)/time.Since(start).Seconds(), "msgs/s")
	}

	bare := func(b *testing.B) {
		consumer, err := sarama.NewConsumer(testenv.KafkaAddrs(), saramaConfig())
		if err != nil {
			b.Fatal(err)
		}
		defer consumer.Close()
		var wg sync.WaitGroup
		for p, last := range counts {
			pc, err := consumer.ConsumePartition(topic, p, sarama.OffsetOldest)
			if err != nil {
				b.Fatal(err)
			}
			defer pc.AsyncClose()
			wg.Add(1)
			go func() {
				defer wg.Done()
				for m := range pc.Messages() {
					if m.Offset == last-1 {
						return
					}
				}
			}()
		}
		wg.Wait()
	}
	b.Run("sarama", func(b *testing.B) { measure(b, bare) })

	oneReader := func(b *testing.B) {
		consumer, err := sarama.NewConsumer(testenv.KafkaAddrs(), saramaConfig())
		if err != nil {
			b.Fatal(err)
		}
		defer consumer.Close()
		merged := make(chan *sarama.ConsumerMessage)
		stop := make(chan struct{})
		defer close(stop)
		for p := range counts {
			pc, err := consumer.ConsumePartition(topic, p, sarama.OffsetOldest)
			if err != nil {
				b.Fatal(err)
			}
			defer pc.AsyncClose()
			go func() {
				for m := range pc.Messages() {
					select {
					case merged <- m:
					case <-stop:
						return
					}
				}
			}()
		}
		for got := 0; got < n; got++ {
			<-merged
		}
	}
	b.Run("sarama-one-reader", func(b *testing.B) { measure(b, oneReader) })

	// messagesPath reads everything through JoinConsumerGroup, Messages()
	// and CommitUpto, and returns the time from the join to the last
	// message (the one-reader has no Close that commits and releases).
	messagesPath := func(b *testing.B) time.Duration {
		t0 := time.Now()
		cg := join(b, testenv.UniqueName("bench"), []string{topic}, nil)
		for got := 0; got < n; got++ {
			_ = cg.CommitUpto(<-cg.Messages())
		}
		toLast := time.Since(t0)
		if err := cg.Close(); err != nil {
			b.Fatal(err)
		}
		return toLast
	}

	// Messages() against the one-reader shape, interleaved (rotating order)
	// so load from elsewhere on the machine weighs on both alike.
	b.Run("paired-messages", func(b *testing.B) {
		var group, reader time.Duration
		for i := 0; i < b.N; i++ {
			if i%2 == 0 {
				group += messagesPath(b)
				t0 := time.Now()
				oneReader(b)
				reader += time.Since(t0)
			} else {
				t0 := time.Now()
				oneReader(b)
				reader += time.Since(t0)
				group += messagesPath(b)
			}
		}
		b.ReportMetric(float64(n*b.N)/group.Seconds(), "messages-msgs/s-to-last")
		b.ReportMetric(float64(n*b.N)/reader.Seconds(), "one-reader-msgs/s")
		b.ReportMetric(reader.Seconds()/group.Seconds(), "messages/one-reader")
	})

	b.Run("consumergroup", func(b *testing.B) {
		var joining, closing time.Duration
		start := time.Now()
		measure(b, func(b *testing.B) {
			t0 := time.Now()
			cg := join(b, testenv.UniqueName("bench"), []string{topic}, nil)
			joining += time.Since(t0)
			for got := 0; got < n; got++ {
				_ = cg.CommitUpto(<-cg.Messages())
			}
			t1 := time.Now()
			if err := cg.Close(); err != nil {
				b.Fatal(err)
			}
			closing += time.Since(t1)
		})
		b.ReportMetric(float64(joining.Milliseconds())/float64(b.N), "join-ms")
		b.ReportMetric(float64(closing.Milliseconds())/float64(b.N), "close-ms")
		// From the join to the last message, as the other readers are
		// measured (they have no Close that commits and releases).
		b.ReportMetric(float64(n*b.N)/(time.Since(start)-closing).Seconds(), "msgs/s-to-last")
	})

	// consumeAll runs g (ours or sarama's) with a handler that marks every
	// message until all n were marked, then closes it.
	consumeAll := func(b *testing.B, g sarama.ConsumerGroup, phases *benchPhases, t0 time.Time) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		h := newCountingHandler(n, cancel)
		for ctx.Err() == nil { // an eager group's session ends at each rebalance
			if err := g.Consume(ctx, []string{topic}, h); err != nil {
				b.Fatal(err)
			}
		}
		if err := g.Close(); err != nil {
			b.Fatal(err)
		}
		phases.add(t0, h)
	}
	// handler runs our group's handler API; batches false reads every
	// partition through sarama's partition consumer instead of whole
	// fetched batches (Fetch.Batches).
	handler := func(b *testing.B, phases *benchPhases, batches bool) {
		t0 := time.Now()
		cfg := testConfig()
		cfg.Fetch.Batches = batches
		g, err := consumergroup.NewConsumerGroup(testenv.UniqueName("bench"), []string{testenv.ZKAddr()}, cfg)
		if err != nil {
			b.Fatal(err)
		}
		consumeAll(b, g, phases, t0)
	}
	b.Run("consumergroup-handler", func(b *testing.B) {
		var phases benchPhases
		defer phases.report(b)
		measure(b, func(b *testing.B) { handler(b, &phases, true) })
	})

	saramaGroup := func(b *testing.B, phases *benchPhases) {
		t0 := time.Now()
		cfg := saramaConfig()
		cfg.Consumer.Offsets.Initial = sarama.OffsetOldest
		cfg.Consumer.MaxWaitTime = testConfig().Consumer.MaxWaitTime // as the groups above
		g, err := sarama.NewConsumerGroup(testenv.KafkaAddrs(), testenv.UniqueName("bench"), cfg)
		if err != nil {
			b.Fatal(err)
		}
		consumeAll(b, g, phases, t0)
	}
	b.Run("sarama-group", func(b *testing.B) {
		var phases benchPhases
		defer phases.report(b)
		measure(b, func(b *testing.B) { saramaGroup(b, &phases) })
	})

	// The three again, and our handler reading through sarama's partition
	// consumers (Fetch.Batches false), interleaved: each iteration runs one
	// of each, in rotating order, so load from elsewhere on the machine
	// weighs on all four alike. The ratios are reported here.
	b.Run("paired", func(b *testing.B) {
		var hp, sp, up benchPhases
		runs := []func(b *testing.B){
			func(b *testing.B) { handler(b, &hp, true) },
			func(b *testing.B) { saramaGroup(b, &sp) },
			bare,
			func(b *testing.B) { handler(b, &up, false) },
		}
		var took [4]time.Duration
		for i := 0; i < b.N; i++ {
			for j := range runs {
				k := (i + j) % len(runs)
				t0 := time.Now()
				runs[k](b)
				took[k] += time.Since(t0)
			}
		}
		rate := func(d time.Duration) float64 { return float64(n*b.N) / d.Seconds() }
		b.ReportMetric(rate(took[0]), "handler-msgs/s")
		b.ReportMetric(rate(took[1]), "sarama-group-msgs/s")
		b.ReportMetric(rate(took[2]), "sarama-msgs/s")
		b.ReportMetric(took[1].Seconds()/took[0].Seconds(), "handler/sarama-group")
		b.ReportMetric(took[2].Seconds()/took[0].Seconds(), "handler/sarama")
		b.ReportMetric(took[3].Seconds()/took[0].Seconds(), "handler/handler-unbatched")
		hp.reportAs(b, "handler-")
		sp.reportAs(b, "sarama-group-")
		up.reportAs(b, "handler-unbatched-")
	})
}

// countingHandler marks every message and calls done once n were marked.
// It notes when the first message came and when the last was marked.
type countingHandler struct {
	n, seen     atomic.Int64
	done        func()
	first, last atomic.Int64 // UnixNano
}

// benchPhases sums, over a benchmark's iterations, the time to the first
// message (join, claim, first fetch) and from the last mark to the end of
// Close (final commit, release, leaving).
type benchPhases struct {
	start, stream, end time.Duration
	runs               int
	n                  int
}

func (p *benchPhases) add(t0 time.Time, h *countingHandler) {
	first, last := time.Unix(0, h.first.Load()), time.Unix(0, h.last.Load())
	p.start += first.Sub(t0)
	p.stream += last.Sub(first)
	p.end += time.Since(last)
	p.runs++
	p.n += int(h.n.Load())
}

// report adds first-ms and end-ms (means) and stream-msgs/s, the rate
// between the first message and the last.
func (p *benchPhases) report(b *testing.B) { p.reportAs(b, "") }

// reportAs is report with prefix before each unit.
func (p *benchPhases) reportAs(b *testing.B, prefix string) {
	if p.runs > 0 {
		b.ReportMetric(float64(p.start.Milliseconds())/float64(p.runs), prefix+"first-ms")
		b.ReportMetric(float64(p.end.Milliseconds())/float64(p.runs), prefix+"end-ms")
		b.ReportMetric(float64(p.n)/p.stream.Seconds(), prefix+"stream-msgs/s")
	}
}

func newCountingHandler(n int, done func()) *countingHandler {
	h := &countingHandler{done: done}
	h.n.Store(int64(n))
	return h
}

func (h *countingHandler) Setup(sarama.ConsumerGroupSession) error   { return nil }
func (h *countingHandler) Cleanup(sarama.ConsumerGroupSession) error { return nil }
func (h *countingHandler) ConsumeClaim(s sarama.ConsumerGroupSession, c sarama.ConsumerGroupClaim) error {
	msgs := c.Messages()
	for {
		select {
		case m, ok := <-msgs:
			if !ok {
				return nil
			}
			s.MarkMessage(m, "")
			switch h.seen.Add(1) {
			case 1:
				h.first.Store(time.Now().UnixNano())
			case h.n.Load():
				h.last.Store(time.Now().UnixNano())
				h.done()
			}
		case <-s.Context().Done():
			return nil
		}
	}
}
