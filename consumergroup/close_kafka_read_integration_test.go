package consumergroup

import (
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/zkgroup/kafka/claim"
	"github.com/zkgroup/kafka/internal/offsets"
)

// slowKafkaStore is the real Kafka offset store whose reads take as long
// as sarama's admin takes when the group's coordinator does not answer:
// ListConsumerGroupOffsets has no context and waits Net.ReadTimeout (30 s
// by default) per try, or Net.DialTimeout for a broker that drops SYNs.
type slowKafkaStore struct {
	offsets.GroupOffsets
	delay   time.Duration
	once    sync.Once
	reading chan struct{}
	done    chan struct{} // closed when the test ends: an abandoned read ends
}

func (s *slowKafkaStore) Fetch(topic string, partition int32) (int64, error) {
	s.once.Do(func() { close(s.reading) })
	select {
	case <-time.After(s.delay):
	case <-s.done:
		return -1, errors.New("the test ended")
	}
	return s.GroupOffsets.Fetch(topic, partition)
}

// Close promises ProcessingTimeout + 1.5 x the session timeout, "even if
// ZooKeeper is out of reach", and sarama's context-free calls must not
// break that. The worker's first read of the committed offset with kafka
// (or dual) storage is such a call (readOffset -> the store's Read ->
// KafkaOffsets.Fetch -> admin.ListConsumerGroupOffsets): Close must
// stop waiting for it once its bound is up (closeExpired); closing the
// ZooKeeper session does not end it.
func TestIntegrationCloseDoesNotWaitForKafkaOffsetRead(t *testing.T) {
	f := newOrphanFixture(t, 1)
	cfg := fenceTestConfig()
	cfg.Offsets.Storage = OffsetStorageKafka
	slow := &slowKafkaStore{delay: cfg.Net.ReadTimeout, reading: make(chan struct{}), done: make(chan struct{})}
	t.Cleanup(func() { close(slow.done) })
	var once sync.Once
	wrap := func(cg *ConsumerGroup, r claim.Registry) claim.Registry {
		once.Do(func() {
			// connect calls this after openOffsetStores and before the
			// manage loop starts.
			slow.GroupOffsets = cg.kafkaOffsets
			cg.kafkaOffsets = slow
		})
		return r
	}
	testHooks.wrapRegistry.Store(&wrap)
	t.Cleanup(func() { testHooks.wrapRegistry.Store(nil) })

	x := f.join(cfg)
	select {
	case <-slow.reading:
	case <-time.After(15 * time.Second):
		t.Fatal("the worker never read its Kafka offset")
	}
	bound := cfg.Offsets.ProcessingTimeout + 3*cfg.Zookeeper.Timeout/2
	start := time.Now()
	done := make(chan error, 1)
	go func() { done <- x.Close() }()
	select {
	case <-done:
		t.Logf("Close took %v (bound %v)", time.Since(start), bound)
	case <-time.After(bound + 2*time.Second):
		err := <-done
		t.Errorf("Close took %v, over its bound ProcessingTimeout + 1.5 x session timeout = %v (+2 s slack): "+
			"it waited for a context-free Kafka offset read (err %v)", time.Since(start), bound, err)
	}
}
