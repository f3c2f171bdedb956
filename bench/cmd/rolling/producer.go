package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

// createTopic creates topic with partitions partitions (one replica) and
// waits until its metadata lists them all. A loaded broker may time the
// request out and create the topic anyway: it asks again until the topic
// exists.
func createTopic(ctx context.Context, brokers []string, topic string, partitions int) error {
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...))
	if err != nil {
		return err
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	for {
		_, err := adm.CreateTopic(ctx, int32(partitions), 1, nil, topic)
		if err == nil || errors.Is(err, kerr.TopicAlreadyExists) {
			break
		}
		if !errors.Is(err, kerr.RequestTimedOut) || ctx.Err() != nil {
			return fmt.Errorf("create %s: %w", topic, err)
		}
		fmt.Fprintf(os.Stderr, "create %s: %v; asking again\n", topic, err)
	}
	for {
		md, err := adm.Metadata(ctx, topic)
		if err == nil {
			if td, ok := md.Topics[topic]; ok && td.Err == nil && len(td.Partitions) == partitions {
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("topic %s: %w", topic, ctx.Err())
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// groupRebalanceDelay returns the broker's group.initial.rebalance.delay.ms,
// which holds back the first rebalance of an empty Kafka-coordinated group.
func groupRebalanceDelay(brokers []string) string {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...))
	if err != nil {
		return err.Error()
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	bs, err := adm.ListBrokers(ctx)
	if err != nil {
		return err.Error()
	}
	rcs, err := adm.DescribeBrokerConfigs(ctx, bs.NodeIDs()...)
	if err != nil {
		return err.Error()
	}
	for _, rc := range rcs {
		for _, c := range rc.Configs {
			if c.Key == "group.initial.rebalance.delay.ms" {
				return c.MaybeValue() + " ms (" + c.Source.String() + ")"
			}
		}
	}
	return "unknown"
}

// producer writes rate messages per second over every partition of a topic
// in turn, acks=all, and records each acknowledged offset in a ledger.
type producer struct {
	cl     *kgo.Client
	stop   context.CancelFunc
	done   chan struct{}
	mu     sync.Mutex
	failed error // the first produce error
}

// startProducer begins producing to topic at rate messages/s, 10 ms apart
// in whole ticks (rate/100 messages a tick, spread over the ticks when
// that is not whole), partition after partition.
func startProducer(brokers []string, topic string, partitions, rate int, l *ledger) (*producer, error) {
	cl, err := kgo.NewClient(
		kgo.SeedBrokers(brokers...),
		kgo.RecordPartitioner(kgo.ManualPartitioner()),
		kgo.RequiredAcks(kgo.AllISRAcks()),
		kgo.ProducerLinger(0),
	)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	p := &producer{cl: cl, stop: cancel, done: make(chan struct{})}
	go func() {
		defer close(p.done)
		const tick = 10 * time.Millisecond
		t := time.NewTicker(tick)
		defer t.Stop()
		start := time.Now()
		sent := 0
		for {
			select {
			case <-ctx.Done():
				return
			case now := <-t.C:
				due := int(now.Sub(start).Seconds() * float64(rate))
				for ; sent < due; sent++ {
					r := &kgo.Record{Topic: topic, Partition: int32(sent % partitions), Value: []byte("m" + strconv.Itoa(sent))}
					cl.Produce(context.Background(), r, func(r *kgo.Record, err error) {
						if err != nil {
							p.mu.Lock()
							if p.failed == nil {
								p.failed = err
							}
							p.mu.Unlock()
							return
						}
						l.ack(r.Partition, r.Offset)
					})
				}
			}
		}
	}()
	return p, nil
}

// close stops producing, waits for every answer and closes the client. It
// returns the first produce error (an unacknowledged message is not
// counted as lost: only acknowledged ones are).
func (p *producer) close() error {
	p.stop()
	<-p.done
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	err := p.cl.Flush(ctx)
	p.cl.Close()
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.failed != nil {
		return p.failed
	}
	return err
}
