package topics

import (
	"errors"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/IBM/sarama"
)

// Kafka's brokers update their metadata caches independently (a broker
// restarted in a ZooKeeper-mode cluster answers "unknown topic" until the
// controller has sent it the cluster's state; a broker behind on the
// metadata log still lists a topic's old partition count), and each
// refresh asks whichever broker is least loaded: a freshly restarted one is.
// One such answer must not take partitions away: the instance would stop
// and release them (and the other instances, asking other brokers, would
// not take them over), then claim them again at the next refresh. A topic
// that really goes, or a real change, is confirmed by the next answer.
func TestKafkaSourceOneStaleAnswerKeepsPartitions(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		fake := &scriptedMetadata{}
		good := answer(map[string][]int32{"a": {1, 1, 1, 1}}, nil)
		fake.set(good, nil)
		var mu sync.Mutex
		var reports []error
		report := func(err error) { mu.Lock(); reports = append(reports, err); mu.Unlock() }
		k := newTestKafkaSource(t, fake, []string{"a"}, false, report)
		refresh := func() {
			time.Sleep(time.Second)
			synctest.Wait()
		}
		woken := func() bool {
			select {
			case <-k.Changed():
				return true
			default:
				return false
			}
		}
		want := func(what string, n int) {
			t.Helper()
			p, err := k.Partitions("a", Leaders{All: true})
			if n < 0 {
				var mt *MissingTopicError
				if !errors.As(err, &mt) {
					t.Fatalf("%s: a = %v, %v; want a missing topic", what, p, err)
				}
				return
			}
			if err != nil || len(p) != n {
				t.Fatalf("%s: a = %v, %v; want %d partitions", what, p, err, n)
			}
		}

		// A broker whose cache is empty: the topic looks unknown once.
		fake.set(answer(nil, map[string]sarama.KError{"a": sarama.ErrUnknownTopicOrPartition}), nil)
		refresh()
		want("one 'unknown topic' answer", 4)
		if woken() {
			t.Fatal("one 'unknown topic' answer woke the manage loop")
		}
		fake.set(good, nil)
		refresh()
		want("back", 4)
		if woken() {
			t.Fatal("the answer that agrees with the last confirmed one woke the manage loop")
		}

		// A broker behind on a partition added: three partitions, once.
		fake.set(answer(map[string][]int32{"a": {1, 1, 1}}, nil), nil)
		refresh()
		want("one answer with a partition fewer", 4)
		fake.set(good, nil)
		refresh()
		want("back", 4)
		if woken() {
			t.Fatal("a stale partition count woke the manage loop")
		}

		// The topic deleted: confirmed by the next answer, and then missing.
		fake.set(answer(nil, map[string]sarama.KError{"a": sarama.ErrUnknownTopicOrPartition}), nil)
		refresh()
		refresh()
		want("deleted, twice unknown", -1)
		if !woken() {
			t.Fatal("a confirmed deletion did not wake the manage loop")
		}
	})
}
