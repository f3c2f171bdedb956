package offsets

import (
	"sync"
	"testing"

	"github.com/IBM/sarama"
)

// flakyOffsetStore is fakeOffsetStore whose first failures commits fail
// with err.
type flakyOffsetStore struct {
	fakeOffsetStore
	mu       sync.Mutex
	failures int
	err      error
}

func (f *flakyOffsetStore) Commit(topic string, partition int32, next int64) error {
	f.mu.Lock()
	if f.failures > 0 {
		f.failures--
		f.mu.Unlock()
		return f.err
	}
	f.mu.Unlock()
	return f.fakeOffsetStore.Commit(topic, partition, next)
}

// The final commit of a partition that leaves this instance retries a
// transient failure, with Kafka storage as with ZooKeeper's: a coordinator
// that moves or times out once must not make the next owner deliver again
// everything marked since the last periodic commit.
func TestKafkaStorageFinalCommitRetriesTransientErrors(t *testing.T) {
	for _, kerr := range []error{sarama.ErrRequestTimedOut, sarama.ErrNotCoordinatorForConsumer, sarama.ErrOutOfBrokers} {
		store := &flakyOffsetStore{fakeOffsetStore: fakeOffsetStore{offsets: map[TopicPartition]int64{}}, failures: 1, err: kerr}
		om := kafkaOnly(store)
		tp := TopicPartition{"t", 0}
		o := om.adopt(tp, nil, 5, -1, nil)
		if !o.Mark(nil, 41) {
			t.Fatal("mark refused")
		}
		if err := om.FinalizePartition("t", 0, 41, 0); err != nil {
			t.Errorf("%v: FinalizePartition: %v", kerr, err)
		}
		if got, _ := store.get(tp); got != 42 {
			t.Errorf("%v once: Kafka holds %d after the final commit, want 42", kerr, got)
		}
	}
}
