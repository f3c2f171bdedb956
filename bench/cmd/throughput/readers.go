package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"sync/atomic"
	"time"

	"github.com/IBM/sarama"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/zkgroup/kafka/bench/internal/benchstack"
	"github.com/zkgroup/kafka/consumergroup"
)

// reader reads all n messages of topic under group (a fresh name) and
// closes what it opened. It fails if ctx ends first.
type reader func(ctx context.Context, st benchstack.Stack, group, topic string, n int) error

// readers are the readers the table compares, by name (the package doc
// says what each does).
var readers = map[string]reader{
	"handler":           readHandler,
	"messages":          readMessages,
	"messages-buffered": readMessagesBuffered,
	"sarama-group":      readSaramaGroup,
	"sarama-one-reader": readSaramaOneReader,
	"franz-group":       readFranzGroup,
	"franz-direct-conv": func(ctx context.Context, st benchstack.Stack, _, topic string, n int) error {
		return readFranzDirectConv(ctx, st, topic, n, channelDepth)
	},
	"franz-direct-unbuf": func(ctx context.Context, st benchstack.Stack, _, topic string, n int) error {
		return readFranzDirectConv(ctx, st, topic, n, 0)
	},
	"franz-direct-raw": readFranzDirectRaw,
}

// readerNames are the readers in the table's order.
func readerNames() []string {
	return []string{"handler", "franz-group", "messages", "messages-buffered", "franz-direct-conv", "franz-direct-unbuf", "franz-direct-raw", "sarama-group", "sarama-one-reader"}
}

func readHandler(ctx context.Context, st benchstack.Stack, group, topic string, n int) error {
	g, err := consumergroup.NewConsumerGroup(group, []string{st.ZK}, benchstack.OurGroupConfig())
	if err != nil {
		return err
	}
	return consumeAll(ctx, g, topic, n)
}

// saramaGroupConfig is sarama's group's config.
func saramaGroupConfig() *sarama.Config {
	cfg := sarama.NewConfig()
	cfg.Version = sarama.V2_8_0_0
	cfg.Consumer.Offsets.Initial = sarama.OffsetOldest
	cfg.Consumer.MaxWaitTime = benchstack.FetchWait
	return cfg
}

func readSaramaGroup(ctx context.Context, st benchstack.Stack, group, topic string, n int) error {
	g, err := sarama.NewConsumerGroup(st.Brokers, group, saramaGroupConfig())
	if err != nil {
		return err
	}
	return consumeAll(ctx, g, topic, n)
}

// consumeAll runs g (ours or sarama's) with a handler marking every
// message until n were marked, then closes g.
func consumeAll(ctx context.Context, g sarama.ConsumerGroup, topic string, n int) error {
	done, finish := context.WithCancel(ctx)
	defer finish()
	h := &markingHandler{n: int64(n), done: finish}
	var err error
	for done.Err() == nil { // a session ends at each rebalance
		if err = g.Consume(done, []string{topic}, h); err != nil && !errors.Is(err, context.Canceled) {
			break
		}
		err = nil
	}
	if cerr := g.Close(); err == nil {
		err = cerr
	}
	if err == nil && h.seen.Load() < h.n {
		err = fmt.Errorf("read %d of %d messages: %w", h.seen.Load(), n, ctx.Err())
	}
	return err
}

// markingHandler marks every message and calls done once n were marked.
type markingHandler struct {
	n       int64 // set before Consume, read-only after
	seen    atomic.Int64
	done    func()
	counted *atomic.Int64 // counts every message too, when set (-conns)
}

func (h *markingHandler) Setup(sarama.ConsumerGroupSession) error   { return nil }
func (h *markingHandler) Cleanup(sarama.ConsumerGroupSession) error { return nil }
func (h *markingHandler) ConsumeClaim(s sarama.ConsumerGroupSession, c sarama.ConsumerGroupClaim) error {
	msgs := c.Messages()
	for {
		select {
		case m, ok := <-msgs:
			if !ok {
				return nil
			}
			s.MarkMessage(m, "")
			if h.counted != nil {
				h.counted.Add(1)
			}
			if h.seen.Add(1) == h.n {
				h.done()
			}
		case <-s.Context().Done():
			return nil
		}
	}
}

func readMessages(ctx context.Context, st benchstack.Stack, group, topic string, n int) error {
	return readMessagesWith(ctx, st, group, topic, n, benchstack.OurGroupConfig())
}

// readMessagesBuffered is messages with Messages.Buffer channelDepth, as
// deep as franz-direct-conv's channel.
func readMessagesBuffered(ctx context.Context, st benchstack.Stack, group, topic string, n int) error {
	cfg := benchstack.OurGroupConfig()
	cfg.Messages.Buffer = channelDepth
	return readMessagesWith(ctx, st, group, topic, n, cfg)
}

func readMessagesWith(ctx context.Context, st benchstack.Stack, group, topic string, n int, cfg *consumergroup.Config) error {
	cg, err := consumergroup.JoinConsumerGroup(group, []string{topic}, []string{st.ZK}, cfg)
	if err != nil {
		return err
	}
	for got := 0; got < n; got++ {
		select {
		case m := <-cg.Messages():
			_ = cg.CommitUpto(m)
		case <-ctx.Done():
			_ = cg.Close()
			return fmt.Errorf("read %d of %d messages: %w", got, n, ctx.Err())
		}
	}
	return cg.Close()
}

func readSaramaOneReader(ctx context.Context, st benchstack.Stack, _, topic string, n int) error {
	cfg := sarama.NewConfig()
	cfg.Version = sarama.V2_8_0_0
	consumer, err := sarama.NewConsumer(st.Brokers, cfg)
	if err != nil {
		return err
	}
	defer consumer.Close()
	partitions, err := consumer.Partitions(topic)
	if err != nil {
		return err
	}
	merged := make(chan *sarama.ConsumerMessage)
	stop := make(chan struct{})
	defer close(stop)
	for _, p := range partitions {
		pc, err := consumer.ConsumePartition(topic, p, sarama.OffsetOldest)
		if err != nil {
			return err
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
		select {
		case <-merged:
		case <-ctx.Done():
			return fmt.Errorf("read %d of %d messages: %w", got, n, ctx.Err())
		}
	}
	return nil
}

// franzGroupOpts are franz-go's group's options.
func franzGroupOpts(st benchstack.Stack, group, topic string) []kgo.Opt {
	return []kgo.Opt{
		kgo.SeedBrokers(st.Brokers...),
		kgo.ConsumerGroup(group),
		kgo.ConsumeTopics(topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.AutoCommitMarks(),
		kgo.FetchMaxWait(benchstack.FetchWait),
	}
}

func readFranzGroup(ctx context.Context, st benchstack.Stack, group, topic string, n int) error {
	cl, err := kgo.NewClient(franzGroupOpts(st, group, topic)...)
	if err != nil {
		return err
	}
	defer cl.Close() // leaves the group, committing what was marked
	got := 0
	for got < n {
		fs := cl.PollFetches(ctx)
		if err := fetchErr(ctx, fs, got, n); err != nil {
			return err
		}
		fs.EachRecord(func(r *kgo.Record) {
			cl.MarkCommitRecords(r)
			got++
		})
	}
	return nil
}

// directClient is a kgo client reading every partition of topic from its
// start, without a group.
func directClient(ctx context.Context, st benchstack.Stack, topic string) (*kgo.Client, error) {
	meta, err := kgo.NewClient(kgo.SeedBrokers(st.Brokers...))
	if err != nil {
		return nil, err
	}
	partitions, err := partitionsOf(ctx, meta, topic)
	meta.Close()
	if err != nil {
		return nil, err
	}
	offsets := make(map[int32]kgo.Offset, len(partitions))
	for _, p := range partitions {
		offsets[p] = kgo.NewOffset().AtStart()
	}
	return kgo.NewClient(
		kgo.SeedBrokers(st.Brokers...),
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: offsets}),
		kgo.FetchMaxWait(benchstack.FetchWait),
	)
}

func readFranzDirectRaw(ctx context.Context, st benchstack.Stack, _, topic string, n int) error {
	cl, err := directClient(ctx, st, topic)
	if err != nil {
		return err
	}
	defer cl.Close()
	got := 0
	for got < n {
		fs := cl.PollFetches(ctx)
		if err := fetchErr(ctx, fs, got, n); err != nil {
			return err
		}
		got += fs.NumRecords()
	}
	return nil
}

// channelDepth is the conversion reader's channel buffer: sarama's
// default ChannelBufferSize.
const channelDepth = 256

// readFranzDirectConv is franz-direct-conv (depth channelDepth) and
// franz-direct-unbuf (depth 0: a message is handed over only when the
// reader takes it, the guarantee our Messages() gives).
func readFranzDirectConv(ctx context.Context, st benchstack.Stack, topic string, n, depth int) error {
	cl, err := directClient(ctx, st, topic)
	if err != nil {
		return err
	}
	defer cl.Close()
	pollCtx, stop := context.WithCancel(ctx)
	defer stop()
	msgs := make(chan *sarama.ConsumerMessage, depth)
	go func() { // one goroutine polls and converts, as a channel API's feed would
		for pollCtx.Err() == nil {
			fs := cl.PollFetches(pollCtx)
			fs.EachError(func(t string, p int32, err error) {
				if pollCtx.Err() == nil {
					fmt.Fprintf(os.Stderr, "fetch %s/%d: %v\n", t, p, err)
				}
			})
			for it := fs.RecordIter(); !it.Done(); {
				select {
				case msgs <- toSarama(it.Next()):
				case <-pollCtx.Done():
					return
				}
			}
		}
	}()
	for got := 0; got < n; got++ {
		select {
		case <-msgs:
		case <-ctx.Done():
			return fmt.Errorf("read %d of %d messages: %w", got, n, ctx.Err())
		}
	}
	return nil
}

// toSarama converts a franz-go record into the message sarama's (and our)
// channels carry.
func toSarama(r *kgo.Record) *sarama.ConsumerMessage {
	m := &sarama.ConsumerMessage{
		Key:       r.Key,
		Value:     r.Value,
		Topic:     r.Topic,
		Partition: r.Partition,
		Offset:    r.Offset,
		Timestamp: r.Timestamp,
	}
	if len(r.Headers) > 0 {
		m.Headers = make([]*sarama.RecordHeader, len(r.Headers))
		for i, h := range r.Headers {
			m.Headers[i] = &sarama.RecordHeader{Key: []byte(h.Key), Value: h.Value}
		}
	}
	return m
}

// fetchErr returns an error once ctx ended; other fetch errors (kgo
// retries them itself) are printed and reading goes on.
func fetchErr(ctx context.Context, fs kgo.Fetches, got, n int) error {
	if ctx.Err() != nil {
		return fmt.Errorf("read %d of %d messages: %w", got, n, ctx.Err())
	}
	fs.EachError(func(t string, p int32, err error) {
		fmt.Fprintf(os.Stderr, "fetch %s/%d: %v\n", t, p, err)
	})
	return nil
}

// partitionsOf returns topic's partitions, asking until it has some.
func partitionsOf(ctx context.Context, cl *kgo.Client, topic string) ([]int32, error) {
	for {
		ps, err := listPartitions(ctx, cl, topic)
		if err == nil && len(ps) > 0 {
			slices.Sort(ps)
			return ps, nil
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("partitions of %s: %w (last: %v)", topic, ctx.Err(), err)
		case <-time.After(200 * time.Millisecond):
		}
	}
}
