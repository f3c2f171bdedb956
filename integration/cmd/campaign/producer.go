package main

import (
	"fmt"
	"sync"
	"time"

	"github.com/IBM/sarama"

	"github.com/zkgroup/kafka/integration/campaign"
)

// producer sends rate messages a second, spread evenly over the
// partitions, with acks from every in-sync replica, and records those
// acknowledged. Messages that fail are not retried by hand: they were never
// acknowledged, so nothing is expected of them.
type producer struct {
	p      sarama.AsyncProducer
	stopCh chan struct{}
	sent   chan struct{} // closed when send returns
	wg     sync.WaitGroup
	mu     sync.Mutex
	acked  []campaign.Ack
	failed int
}

func startProducer(brokers []string, topic string, partitions int32, rate int, seed uint64) (*producer, error) {
	cfg := sarama.NewConfig()
	cfg.Version = sarama.V2_8_0_0
	cfg.Producer.RequiredAcks = sarama.WaitForAll
	cfg.Producer.Return.Successes = true
	cfg.Producer.Partitioner = sarama.NewManualPartitioner
	cfg.Producer.Retry.Max = 10
	cfg.Producer.Retry.Backoff = 200 * time.Millisecond
	cfg.Producer.Idempotent = true
	cfg.Net.MaxOpenRequests = 1
	ap, err := sarama.NewAsyncProducer(brokers, cfg)
	if err != nil {
		return nil, err
	}
	pr := &producer{p: ap, stopCh: make(chan struct{}), sent: make(chan struct{})}
	pr.wg.Add(2)
	go pr.send(topic, partitions, rate, seed)
	go func() {
		defer pr.wg.Done()
		for m := range ap.Successes() {
			v, _ := m.Value.Encode()
			pr.mu.Lock()
			pr.acked = append(pr.acked, campaign.Ack{Partition: m.Partition, Offset: m.Offset, Value: string(v), At: time.Now()})
			pr.mu.Unlock()
		}
	}()
	go func() {
		defer pr.wg.Done()
		for range ap.Errors() {
			pr.mu.Lock()
			pr.failed++
			pr.mu.Unlock()
		}
	}()
	return pr, nil
}

func (pr *producer) send(topic string, partitions int32, rate int, seed uint64) {
	defer close(pr.sent)
	tick := time.NewTicker(time.Second / time.Duration(rate))
	defer tick.Stop()
	for n := 0; ; n++ {
		select {
		case <-pr.stopCh:
			return
		case <-tick.C:
		}
		m := &sarama.ProducerMessage{Topic: topic, Partition: int32(n) % partitions, Value: sarama.StringEncoder(fmt.Sprintf("%d-%d", seed, n))}
		select {
		case pr.p.Input() <- m:
		case <-pr.stopCh:
			return
		}
	}
}

// stop stops sending, waits for the answers in flight and returns what was
// acknowledged and how many sends failed.
func (pr *producer) stop() ([]campaign.Ack, int) {
	close(pr.stopCh)
	<-pr.sent
	pr.p.AsyncClose()
	pr.wg.Wait()
	pr.mu.Lock()
	defer pr.mu.Unlock()
	return pr.acked, pr.failed
}

// ackedCount returns how many were acknowledged so far.
func (pr *producer) ackedCount() int {
	pr.mu.Lock()
	defer pr.mu.Unlock()
	return len(pr.acked)
}
