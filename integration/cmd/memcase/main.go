// Command memcase runs one memory case of the consumer groups against the
// local stack and prints the process's peak RSS (VmHWM), its live heap
// (HeapAlloc after a GC) and RSS once the work is done, the goroutines
// then and the bytes allocated up to then (from the case's start, after
// the topic).
// Each case runs in its own process, since the RSS peak is per process:
//
//	go run ./integration/cmd/memcase -case cg-messages -n 500000
//	go run ./integration/cmd/memcase -case cg-handler -n 500000
//	go run ./integration/cmd/memcase -case sarama-group -n 500000
//	go run ./integration/cmd/memcase -case cg-idle -partitions 1024
//	go run ./integration/cmd/memcase -case sarama-idle -partitions 1024
//	go run ./integration/cmd/memcase -case cg-busy -partitions 1024 -per 150 -size 1000
//	go run ./integration/cmd/memcase -case cg-busy-messages -partitions 1024 -per 150 -size 1000
//	go run ./integration/cmd/memcase -case sarama-busy -partitions 1024 -per 150 -size 1000
//
// The throughput cases read a 4-partition topic (zkgroup.mem.4.<n>,
// created and filled with n messages on first use, then kept) from the
// start under a new group, marking every message, as
// BenchmarkIntegrationThroughput does: cg-messages with JoinConsumerGroup,
// Messages() and CommitUpto; cg-handler with NewConsumerGroup and a
// handler calling MarkMessage; sarama-group with sarama.NewConsumerGroup
// and the same handler. The idle cases own every partition of
// zkgroup.scale.<partitions> (created by the scale benchmarks, or here
// with one message per partition) with one instance, wait until every
// partition delivered, then read on for 5 s. The busy cases read a topic
// of partitions partitions each holding a backlog of per messages of size
// bytes (zkgroup.mem.busy.<partitions>.<per>.<size>, created and filled on
// first use, then kept) to the end under a new group, marking every
// message: cg-busy through the handler, cg-busy-messages through
// Messages() and CommitUpto, sarama-busy with sarama's group. -batches=false
// turns the group's batch feed off (Config.Fetch.Batches).
// -stall holds every reader back for a while from the case's start, so
// the buffers between broker and reader fill up: the memory of a reader
// slower than the fetches. -slow k (busy cases through the handler) makes
// the readers of partitions 0..k-1 stop after their first message until
// every other message is marked: what a few slow partitions keep alive
// while their round-mates are read.
// Besides the whole run, each case prints the time from its start to the
// first message delivered and to the last message wanted (the throughput and busy cases) or to the last
// partition heard from (the idle cases).
// ZK_ADDR and KAFKA_ADDRS name the stack, as for the tests.
package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/IBM/sarama"
	metrics "github.com/rcrowley/go-metrics"

	"github.com/zkgroup/kafka/consumergroup"
)

func main() {
	which := flag.String("case", "", "cg-messages, cg-handler, sarama-group, cg-idle, sarama-idle, cg-busy, cg-busy-messages or sarama-busy")
	n := flag.Int("n", 500_000, "messages (throughput cases)")
	partitions := flag.Int("partitions", 1024, "partitions (idle and busy cases)")
	per := flag.Int("per", 150, "messages per partition (busy cases)")
	size := flag.Int("size", 1000, "bytes per message value (busy cases)")
	flag.BoolVar(&batches, "batches", true, "Config.Fetch.Batches of the group's cases")
	flag.StringVar(&heapProfile, "heapprofile", "", "write a heap profile here when the live heap is taken")
	flag.DurationVar(&stall, "stall", 0, "how long the reader (handler or Messages() loop) waits before reading its first message, so buffers fill up")
	flag.IntVar(&slow, "slow", 0, "busy cases through the handler: partitions 0..slow-1 stop after their first message until every other message is marked")
	flag.StringVar(&midProfile, "midprofile", "", "write a heap profile here (after a GC) when half the messages wanted were marked")
	flag.StringVar(&goroutineProfile, "goroutineprofile", "", "write the goroutines, grouped by stack, here when the live heap is taken")
	flag.Parse()
	if heapProfile != "" || midProfile != "" {
		// The default rate samples one allocation per 512 KiB: too coarse
		// to tell apart the per-partition sites of a 20 MiB heap.
		runtime.MemProfileRate = 4096
	}
	zkAddr := env("ZK_ADDR", "127.0.0.1:2181")
	brokers := strings.Split(env("KAFKA_ADDRS", "127.0.0.1:9092"), ",")
	group := fmt.Sprintf("memcase-%d", time.Now().UnixNano())

	var topic string
	var want int // messages to mark; for the idle cases, partitions to hear from
	var err error
	switch {
	case strings.HasSuffix(*which, "-idle"):
		topic, want = fmt.Sprintf("zkgroup.scale.%d", *partitions), *partitions
		err = ensureTopic(brokers, topic, int32(*partitions), *partitions, 0)
	case strings.Contains(*which, "-busy"):
		topic, want = fmt.Sprintf("zkgroup.mem.busy.%d.%d.%d", *partitions, *per, *size), *partitions**per
		slowHeld = int64(slow * (*per - 1))
		if err = ensureTopic(brokers, topic, int32(*partitions), want, *size); err == nil {
			want, err = topicSize(brokers, topic) // a retried send may have added some
		}
	default:
		topic, want = fmt.Sprintf("zkgroup.mem.4.%d", *n), *n
		err = ensureTopic(brokers, topic, 4, *n, 0)
	}
	if err != nil {
		fail(err)
	}
	runtime.GC()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	allocatedBefore := before.TotalAlloc
	t0 := time.Now()
	start = t0
	var heap uint64
	switch *which {
	case "cg-messages", "cg-busy-messages":
		heap, err = runMessages(zkAddr, group, topic, want)
	case "cg-handler", "cg-idle", "cg-busy":
		heap, err = runHandler(zkAddr, group, topic, want, *which == "cg-idle")
	case "sarama-group", "sarama-idle", "sarama-busy":
		heap, err = runSaramaGroup(brokers, group, topic, want, *which == "sarama-idle")
	default:
		err = fmt.Errorf("unknown case %q", *which)
	}
	if err != nil {
		fail(err)
	}
	fmt.Printf("case %s batches %v topic %s: %v, to the first %v, to the last %v, partition batches through sarama's partition consumer %d, live heap after GC %.1f MiB, goroutines %d (stacks %.1f MiB), allocated %.0f MiB, RSS then %s, peak RSS (VmHWM) %s\n",
		*which, batches, topic, time.Since(t0).Round(time.Millisecond), time.Duration(toFirst.Load()).Round(time.Millisecond), toLast.Round(time.Millisecond), saramaBatches, float64(heap)/(1<<20), goroutines, float64(stacks)/(1<<20),
		float64(allocated-allocatedBefore)/(1<<20), rssThen, procStatus("VmHWM"))
}

func env(k, def string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return def
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "memcase:", err)
	os.Exit(1)
}

// batches is the -batches flag.
var batches bool

// start is when the case started (after its topic was ready).
var start time.Time

// toFirst is the time from start to the first message delivered.
var toFirst atomic.Int64

// noteFirst records the time to the first message, once.
func noteFirst() { toFirst.CompareAndSwap(0, int64(time.Since(start))) }

// toLast is the time from start to the last message (or, in the idle
// cases, partition) the case waited for.
var toLast time.Duration

// heapProfile is the -heapprofile flag.
var heapProfile string

// stall is the -stall flag: a reader slower than the fetches, at its
// worst, so every buffer between broker and reader fills before anything
// is read.
var stall time.Duration

// stallOnce makes the readers wait out stall from the case's start, once:
// every claim's reader waits for the same moment.
func stallOnce() {
	if d := stall - time.Since(start); d > 0 {
		time.Sleep(d)
	}
}

// slow is the -slow flag; slowHeld is how many messages its slow
// partitions hold back; slowGate is closed once every other message is
// marked.
var (
	slow     int
	slowHeld int64
	slowGate = make(chan struct{})
	slowOnce sync.Once
)

// holdIfSlow blocks the reader of a slow partition after its first
// message until slowGate closes (or ctx ends).
func holdIfSlow(ctx context.Context, partition int32, first bool) {
	if int(partition) < slow && first {
		select {
		case <-slowGate:
		case <-ctx.Done():
		}
	}
}

// midProfile is the -midprofile flag.
var midProfile string

// midProfileOnce writes the mid-run heap profile once.
var midProfileOnce sync.Once

// noteProgress writes the mid-run heap profile, if asked for, once seen
// of want messages were marked: half of them.
func noteProgress(seen, want int64) {
	if midProfile == "" || seen < want/2 {
		return
	}
	midProfileOnce.Do(func() {
		runtime.GC()
		if f, err := os.Create(midProfile); err == nil {
			_ = pprof.WriteHeapProfile(f)
			_ = f.Close()
		}
	})
}

// goroutineProfile is the -goroutineprofile flag.
var goroutineProfile string

// goroutines is the number of goroutines when the live heap was taken
// (their stacks count in the RSS, not in the heap).
var goroutines int

// stacks is StackInuse then: the goroutines' stacks, outside the heap.
var stacks uint64

// rssThen is the RSS (VmRSS) when the live heap was taken: the peak is
// mostly the start's garbage, this is what the steady state holds,
// goroutine stacks included.
var rssThen string

// allocated is the bytes allocated in all (TotalAlloc) when the live heap
// was taken: garbage made on the way to it drives the RSS peak.
var allocated uint64

// liveHeap returns HeapAlloc after a GC, writing the heap and goroutine
// profiles if they were asked for.
func liveHeap() uint64 {
	runtime.GC()
	if heapProfile != "" {
		if f, err := os.Create(heapProfile); err == nil {
			_ = pprof.WriteHeapProfile(f)
			_ = f.Close()
		}
	}
	if goroutineProfile != "" {
		if f, err := os.Create(goroutineProfile); err == nil {
			_ = pprof.Lookup("goroutine").WriteTo(f, 1)
			_ = f.Close()
		}
	}
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	goroutines = runtime.NumGoroutine()
	stacks = ms.StackInuse
	rssThen = procStatus("VmRSS")
	if h, ok := registry.Get("consumer-batch-size").(metrics.Histogram); ok {
		saramaBatches = h.Count()
	}
	allocated = ms.TotalAlloc
	return ms.HeapAlloc
}

// procStatus returns the value of one line of /proc/self/status, such as
// VmHWM (the peak RSS) or VmRSS (the RSS now).
func procStatus(key string) string {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return "?"
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		if v, ok := strings.CutPrefix(s.Text(), key+":"); ok {
			return strings.TrimSpace(v)
		}
	}
	return "?"
}

func groupConfig() *consumergroup.Config {
	cfg := consumergroup.NewConfig()
	cfg.Version = sarama.V2_8_0_0
	cfg.Offsets.Initial = sarama.OffsetOldest
	cfg.Offsets.ProcessingTimeout = 5 * time.Second
	cfg.Offsets.CommitInterval = 100 * time.Millisecond
	cfg.Consumer.MaxWaitTime = 100 * time.Millisecond
	cfg.Fetch.Batches = batches
	cfg.MetricRegistry = registry
	return cfg
}

// registry is the metric registry of the group's cases: sarama's partition
// consumers register their "consumer-batch-size" histogram in it, so it
// tells how many fetch responses went through them rather than the feed.
var registry = metrics.NewRegistry()

// saramaBatches is the number of partition batches sarama's partition
// consumers parsed, read when the live heap is taken.
var saramaBatches int64

func runMessages(zkAddr, group, topic string, n int) (uint64, error) {
	cg, err := consumergroup.JoinConsumerGroup(group, []string{topic}, []string{zkAddr}, groupConfig())
	if err != nil {
		return 0, err
	}
	stallOnce()
	for got := 0; got < n; got++ {
		_ = cg.CommitUpto(<-cg.Messages())
		noteFirst()
		noteProgress(int64(got+1), int64(n))
	}
	toLast = time.Since(start)
	heap := liveHeap()
	return heap, cg.Close()
}

// markingHandler marks every message; done runs once want messages were
// marked or (distinct) want partitions delivered.
type markingHandler struct {
	want     int64
	byParts  bool
	seen     atomic.Int64
	parts    sync.Map
	done     func()
	doneOnce sync.Once
}

func (h *markingHandler) Setup(sarama.ConsumerGroupSession) error   { return nil }
func (h *markingHandler) Cleanup(sarama.ConsumerGroupSession) error { return nil }
func (h *markingHandler) ConsumeClaim(s sarama.ConsumerGroupSession, c sarama.ConsumerGroupClaim) error {
	stallOnce()
	first := true
	for {
		select {
		case m, ok := <-c.Messages():
			if !ok {
				return nil
			}
			s.MarkMessage(m, "")
			noteFirst()
			if h.byParts {
				if _, loaded := h.parts.LoadOrStore(m.Partition, true); !loaded && h.seen.Add(1) == h.want {
					h.doneOnce.Do(h.done)
				}
			} else if seen := h.seen.Add(1); seen == h.want {
				h.doneOnce.Do(h.done)
			} else {
				if slow > 0 && seen == h.want-slowHeld {
					slowOnce.Do(func() { close(slowGate) })
				}
				noteProgress(seen, h.want)
			}
			holdIfSlow(s.Context(), m.Partition, first)
			first = false
		case <-s.Context().Done():
			return nil
		}
	}
}

// consumeUntil runs consume until the handler is done (plus 5 s for the
// idle cases) and returns the live heap then.
func consumeUntil(idle bool, want int, consume func(ctx context.Context, h *markingHandler) error) (uint64, error) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	reached := make(chan struct{})
	h := &markingHandler{want: int64(want), byParts: idle, done: func() { close(reached) }}
	var heap uint64
	go func() {
		<-reached
		toLast = time.Since(start)
		if idle {
			time.Sleep(5 * time.Second)
		}
		heap = liveHeap()
		cancel()
	}()
	for ctx.Err() == nil {
		if err := consume(ctx, h); err != nil && !errors.Is(err, context.Canceled) {
			return 0, err
		}
	}
	return heap, nil
}

func runHandler(zkAddr, group, topic string, want int, idle bool) (uint64, error) {
	g, err := consumergroup.NewConsumerGroup(group, []string{zkAddr}, groupConfig())
	if err != nil {
		return 0, err
	}
	return runGroup(g, topic, want, idle)
}

func runSaramaGroup(brokers []string, group, topic string, want int, idle bool) (uint64, error) {
	cfg := sarama.NewConfig()
	cfg.Version = sarama.V2_8_0_0
	cfg.Consumer.Offsets.Initial = sarama.OffsetOldest
	cfg.Consumer.MaxWaitTime = 100 * time.Millisecond
	g, err := sarama.NewConsumerGroup(brokers, group, cfg)
	if err != nil {
		return 0, err
	}
	return runGroup(g, topic, want, idle)
}

// runGroup consumes topic with g (ours or sarama's, both a
// sarama.ConsumerGroup) until consumeUntil is done, then closes g.
func runGroup(g sarama.ConsumerGroup, topic string, want int, idle bool) (uint64, error) {
	heap, err := consumeUntil(idle, want, func(ctx context.Context, h *markingHandler) error {
		return g.Consume(ctx, []string{topic}, h)
	})
	if cerr := g.Close(); err == nil {
		err = cerr
	}
	return heap, err
}

// ensureTopic creates topic with partitions and fills it with n messages,
// each partition's share in one go, unless it exists already. size is the
// bytes of each message's value; 0 for a short "message <i>".
func ensureTopic(brokers []string, topic string, partitions int32, n, size int) error {
	cfg := sarama.NewConfig()
	cfg.Version = sarama.V2_8_0_0
	admin, err := sarama.NewClusterAdmin(brokers, cfg)
	if err != nil {
		return err
	}
	err = admin.CreateTopic(topic, &sarama.TopicDetail{NumPartitions: partitions, ReplicationFactor: 1}, false)
	_ = admin.Close()
	if errors.Is(err, sarama.ErrTopicAlreadyExists) {
		return nil
	}
	// A request timeout only means the broker is still creating the
	// partitions: the producer below waits for their leaders.
	if err != nil && !errors.Is(err, sarama.ErrRequestTimedOut) {
		return err
	}
	cfg.Producer.Return.Successes = true
	cfg.Producer.RequiredAcks = sarama.WaitForAll
	cfg.Producer.Partitioner = sarama.NewManualPartitioner
	var p sarama.SyncProducer
	for i := 0; ; i++ { // the new partitions need a moment to get their leader
		if p, err = sarama.NewSyncProducer(brokers, cfg); err == nil {
			break
		}
		if i == 50 {
			return err
		}
		time.Sleep(200 * time.Millisecond)
	}
	defer p.Close()
	const chunk = 5000
	for sent := 0; sent < n; sent += chunk {
		var msgs []*sarama.ProducerMessage
		for i := sent; i < min(sent+chunk, n); i++ {
			// partition p gets messages p*n/partitions up to (p+1)*n/partitions
			p := int32(int64(i) * int64(partitions) / int64(n))
			msgs = append(msgs, &sarama.ProducerMessage{Topic: topic, Partition: p, Value: sarama.ByteEncoder(messageValue(i, size))})
		}
		for try := 0; ; try++ {
			if err = p.SendMessages(msgs); err == nil {
				break
			}
			if try == 20 {
				return err
			}
			time.Sleep(200 * time.Millisecond)
		}
	}
	return nil
}

// messageValue is message i's value: "message <i>", padded with filler up
// to size bytes when size is larger.
func messageValue(i, size int) []byte {
	v := []byte(fmt.Sprintf("message %d ", i))
	for len(v) < size {
		v = append(v, byte('a'+len(v)%26))
	}
	return v
}

// topicSize returns the messages topic holds: the sum of its partitions'
// newest offsets (nothing is ever deleted on the stack).
func topicSize(brokers []string, topic string) (int, error) {
	client, err := sarama.NewClient(brokers, sarama.NewConfig())
	if err != nil {
		return 0, err
	}
	defer client.Close()
	ps, err := client.Partitions(topic)
	if err != nil {
		return 0, err
	}
	total := 0
	for _, p := range ps {
		n, err := client.GetOffset(topic, p, sarama.OffsetNewest)
		if err != nil {
			return 0, err
		}
		total += int(n)
	}
	return total, nil
}
