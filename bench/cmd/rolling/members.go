package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/IBM/sarama"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/zkgroup/kafka/bench/internal/benchstack"
	"github.com/zkgroup/kafka/consumergroup"
)

// member is one running instance of a group.
type member interface {
	// close shuts the instance down as a deploy would (a final commit, and
	// for our groups the release of its claims) and returns once it is gone.
	close() error
}

// memberSpec says how one instance of a group kind starts.
type memberSpec struct {
	st     benchstack.Stack
	group  string
	topic  string
	grace  time.Duration // ours, static: Static.GraceWindow (0: the default)
	ledger *ledger
}

// starter starts the instance in slot (its place in the deploy order).
type starter func(spec memberSpec, slot int) (member, error)

// kinds are the groups the program compares, by name.
var kinds = map[string]starter{
	"ours-static":   startOurs(true),
	"ours-dynamic":  startOurs(false),
	"sarama-static": startSarama,
	"franz-static":  startFranz,
}

// kindNames are the groups in the table's order.
func kindNames() []string {
	return []string{"ours-static", "ours-dynamic", "sarama-static", "franz-static"}
}

// instanceID is slot's static id, "i0".."i<N-1>".
func instanceID(slot int) string { return fmt.Sprintf("i%d", slot) }

// handlerMember runs a sarama.ConsumerGroup (ours or sarama's) with a
// handler recording every message, until close.
type handlerMember struct {
	g      sarama.ConsumerGroup
	cancel context.CancelFunc
	done   chan struct{}
	slot   int
	l      *ledger
}

func runHandler(g sarama.ConsumerGroup, spec memberSpec, slot int, name string) *handlerMember {
	ctx, cancel := context.WithCancel(context.Background())
	m := &handlerMember{g: g, cancel: cancel, done: make(chan struct{}), slot: slot, l: spec.ledger}
	go func() {
		for err := range g.Errors() {
			fmt.Fprintf(os.Stderr, "%s %s: %v\n", name, instanceID(slot), err)
		}
	}()
	go func() {
		defer close(m.done)
		h := &recordingHandler{slot: slot, l: spec.ledger}
		for ctx.Err() == nil { // sarama's eager sessions end at each rebalance; ours and cooperative ones at Close
			err := g.Consume(ctx, []string{spec.topic}, h)
			if errors.Is(err, sarama.ErrClosedConsumerGroup) {
				return
			}
			if err != nil && ctx.Err() == nil {
				fmt.Fprintf(os.Stderr, "%s %s: Consume: %v\n", name, instanceID(slot), err)
				time.Sleep(100 * time.Millisecond)
			}
		}
	}()
	return m
}

func (m *handlerMember) close() error {
	err := m.g.Close()
	m.cancel()
	<-m.done
	m.l.releaseAll(m.slot)
	return err
}

// recordingHandler records every message and marks it.
type recordingHandler struct {
	slot int
	l    *ledger
}

func (h *recordingHandler) Setup(sarama.ConsumerGroupSession) error   { return nil }
func (h *recordingHandler) Cleanup(sarama.ConsumerGroupSession) error { return nil }
func (h *recordingHandler) ConsumeClaim(s sarama.ConsumerGroupSession, c sarama.ConsumerGroupClaim) error {
	h.l.hold(h.slot, c.Partition(), true)
	defer h.l.hold(h.slot, c.Partition(), false)
	msgs := c.Messages()
	for {
		select {
		case m, ok := <-msgs:
			if !ok {
				return nil
			}
			h.l.deliver(h.slot, m.Partition, m.Offset)
			s.MarkMessage(m, "")
		case <-s.Context().Done():
			return nil
		}
	}
}

// ourConfig is our groups' config: as bench's throughput command has it
// (benchstack.OurGroupConfig), the default assignment (sticky) and, when
// static, the slot's id and the grace window.
func ourConfig(static bool, slot int, grace time.Duration) *consumergroup.Config {
	cfg := benchstack.OurGroupConfig()
	cfg.Consumer.Return.Errors = true
	if static {
		cfg.Consumer.Group.InstanceId = instanceID(slot)
		if grace > 0 {
			cfg.Static.GraceWindow = grace
		}
	}
	return cfg
}

// startOurs starts our handler API (NewConsumerGroup), static or with a
// fresh dynamic id each start.
func startOurs(static bool) starter {
	return func(spec memberSpec, slot int) (member, error) {
		g, err := consumergroup.NewConsumerGroup(spec.group, []string{spec.st.ZK}, ourConfig(static, slot, spec.grace))
		if err != nil {
			return nil, err
		}
		return runHandler(g, spec, slot, "ours"), nil
	}
}

// startSarama starts sarama's Kafka-coordinated group, static, on the
// cooperative-sticky strategy.
func startSarama(spec memberSpec, slot int) (member, error) {
	cfg := sarama.NewConfig()
	cfg.Version = sarama.V2_8_0_0
	cfg.ClientID = "rolling-" + instanceID(slot)
	cfg.Consumer.Offsets.Initial = sarama.OffsetOldest
	cfg.Consumer.MaxWaitTime = benchstack.FetchWait
	cfg.Consumer.Return.Errors = true
	cfg.Consumer.Group.InstanceId = instanceID(slot)
	cfg.Consumer.Group.Rebalance.GroupStrategies = []sarama.BalanceStrategy{sarama.NewBalanceStrategyCooperativeSticky()}
	g, err := sarama.NewConsumerGroup(spec.st.Brokers, spec.group, cfg)
	if err != nil {
		return nil, err
	}
	return runHandler(g, spec, slot, "sarama"), nil
}

// franzMember is a kgo group consumer polling and recording every record
// until close.
type franzMember struct {
	cl     *kgo.Client
	cancel context.CancelFunc
	done   chan struct{}
	slot   int
	l      *ledger
}

// startFranz starts franz-go's group consumer, static, on the
// cooperative-sticky balancer, marking every record it polled
// (AutoCommitMarks) and committing the marks of partitions it loses.
func startFranz(spec memberSpec, slot int) (member, error) {
	l := spec.ledger
	each := func(ps map[string][]int32, held bool) {
		for _, p := range ps[spec.topic] {
			l.hold(slot, p, held)
		}
	}
	cl, err := kgo.NewClient(
		kgo.SeedBrokers(spec.st.Brokers...),
		kgo.ClientID("rolling-"+instanceID(slot)),
		kgo.ConsumerGroup(spec.group),
		kgo.ConsumeTopics(spec.topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.InstanceID(instanceID(slot)),
		kgo.Balancers(kgo.CooperativeStickyBalancer()),
		kgo.AutoCommitMarks(),
		kgo.FetchMaxWait(benchstack.FetchWait),
		kgo.OnPartitionsAssigned(func(_ context.Context, _ *kgo.Client, ps map[string][]int32) { each(ps, true) }),
		kgo.OnPartitionsRevoked(func(ctx context.Context, cl *kgo.Client, ps map[string][]int32) {
			each(ps, false)
			if err := cl.CommitMarkedOffsets(ctx); err != nil {
				fmt.Fprintf(os.Stderr, "franz %s: commit on revoke: %v\n", instanceID(slot), err)
			}
		}),
		kgo.OnPartitionsLost(func(_ context.Context, _ *kgo.Client, ps map[string][]int32) { each(ps, false) }),
	)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	m := &franzMember{cl: cl, cancel: cancel, done: make(chan struct{}), slot: slot, l: l}
	go func() {
		defer close(m.done)
		for ctx.Err() == nil {
			fs := cl.PollFetches(ctx)
			fs.EachError(func(t string, p int32, err error) {
				if ctx.Err() == nil && !errors.Is(err, context.Canceled) {
					fmt.Fprintf(os.Stderr, "franz %s: fetch %s/%d: %v\n", instanceID(slot), t, p, err)
				}
			})
			fs.EachRecord(func(r *kgo.Record) {
				l.deliver(slot, r.Partition, r.Offset)
				cl.MarkCommitRecords(r)
			})
		}
	}()
	return m, nil
}

// franzCommitWait bounds the final commit before a franz member closes.
const franzCommitWait = 10 * time.Second

func (m *franzMember) close() error {
	m.cancel()
	<-m.done
	ctx, cancel := context.WithTimeout(context.Background(), franzCommitWait)
	defer cancel()
	err := m.cl.CommitMarkedOffsets(ctx)
	m.cl.Close()
	m.l.releaseAll(m.slot)
	return err
}
