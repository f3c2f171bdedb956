package main

import (
	"context"
	"strconv"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

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
