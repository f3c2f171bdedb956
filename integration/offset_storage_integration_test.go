package integration

import (
	"testing"
	"time"

	"github.com/zkgroup/kafka/consumergroup"
	"github.com/zkgroup/kafka/internal/testenv"
	"github.com/zkgroup/kafka/kazoo"
)

// TestIntegrationKafkaStorageDescribe: with Offsets.Storage kafka and
// dual, Kafka's own kafka-consumer-groups.sh --describe shows the group,
// each partition's committed offset exactly as the group committed it (a
// partition never marked included, at its start offset) and the lag
// against the log end, both while the group runs and after it closed and
// more was produced. With kafka nothing is written to ZooKeeper's offset
// nodes; with dual they hold the same offsets.
//
// Skipped when java or the kafka-tools jar is missing (see groupCommandLib).
func TestIntegrationKafkaStorageDescribe(t *testing.T) {
	testenv.Integration(t)
	lib := groupCommandLib(t)
	for _, storage := range []consumergroup.OffsetStorage{consumergroup.OffsetStorageKafka, consumergroup.OffsetStorageDual} {
		t.Run(string(storage), func(t *testing.T) { describeStorage(t, lib, storage) })
	}
}

func describeStorage(t *testing.T, lib string, storage consumergroup.OffsetStorage) {
	const partitions = 3
	topic := newTopic(t, partitions)
	group := testenv.UniqueName("describe")
	produceTo(t, topic, map[int32]int{0: 10, 1: 6}) // 2 stays empty

	cg := join(t, group, []string{topic}, storageConfig(storage))
	l := newLedger()
	done := consume(t, 0, cg, l)
	waitFor(t, 20*time.Second, "every message delivered", func() bool { return l.distinct() == 16 })
	committed := map[int32]int64{0: 10, 1: 6, 2: 0}
	waitKafkaOffsets(t, group, topic, committed, 10*time.Second)
	checkRows(t, describeGroup(t, lib, group, topic), committed, committed)

	closeGroup(t, cg)
	<-done
	produceTo(t, topic, map[int32]int{0: 3, 2: 5})
	checkRows(t, describeGroup(t, lib, group, topic), committed, map[int32]int64{0: 13, 1: 6, 2: 5})

	kz, err := kazoo.NewKazoo([]string{testenv.ZKAddr()}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer kz.Close()
	zk, err := kz.Consumergroup(group).FetchAllOffsets()
	if err != nil {
		t.Fatal(err)
	}
	switch storage {
	case consumergroup.OffsetStorageKafka:
		if len(zk[topic]) != 0 {
			t.Errorf("kafka storage wrote ZooKeeper offset nodes: %v", zk[topic])
		}
	default:
		for p, want := range committed {
			if got, ok := zk[topic][p]; !ok || got != want {
				t.Errorf("dual storage: ZooKeeper offset of partition %d = %d (present %v), want %d", p, got, ok, want)
			}
		}
	}
}

// checkRows compares kafka-consumer-groups' rows with the committed offsets
// and log ends expected; the lag must be their difference.
func checkRows(t *testing.T, rows map[int32]groupCommandRow, current, logEnd map[int32]int64) {
	t.Helper()
	if len(rows) != len(current) {
		t.Fatalf("kafka-consumer-groups lists %d partitions (%v), want %d", len(rows), rows, len(current))
	}
	for p, cur := range current {
		r := rows[p]
		if r.current != cur || r.logEnd != logEnd[p] || r.lag != logEnd[p]-cur {
			t.Errorf("partition %d: current %d log end %d lag %d, want %d %d %d", p, r.current, r.logEnd, r.lag, cur, logEnd[p], logEnd[p]-cur)
		}
	}
}

// TestIntegrationOffsetStorageMigration moves a running group's offsets from
// ZooKeeper to Kafka with rolling restarts, as an operator would, producing
// and consuming at every step, then hands the group to a plain
// broker-coordinated sarama.ConsumerGroup of the same name:
//
//  1. two members on zookeeper storage;
//  2. restarted one by one with dual storage (a dual member and a
//     zookeeper member share the group in between);
//  3. restarted one by one with kafka storage (kafka and dual members
//     share the group in between);
//  4. a rollback of one member to dual and forward again: the dual member
//     takes partitions whose ZooKeeper offsets stopped moving in step 3 and
//     must start from Kafka's, the higher;
//  5. both closed; a sarama.ConsumerGroup continues from the offsets they
//     committed to Kafka.
//
// Every member marks every message it receives, so no message may be lost
// and none delivered twice at any step.
func TestIntegrationOffsetStorageMigration(t *testing.T) {
	testenv.Integration(t)
	const (
		partitions = 4
		batch      = 200
	)
	topic := newTopic(t, partitions)
	group := testenv.UniqueName("migrate")
	l := newLedger()
	h := recordDeliveries(t, group, topic, partitions, l)
	total := make(map[int32]int64)
	produced := 0
	step := func(what string) {
		t.Helper()
		for p, c := range produce(t, topic, batch) {
			total[p] += c
		}
		produced += batch
		waitFor(t, 60*time.Second, what+": every message delivered", func() bool { return l.distinct() == produced })
		t.Logf("%s: %d produced, %d delivered, %d lost, %d duplicates", what, produced, l.distinct(), l.missing(topic, total), l.duplicates())
		if d := l.duplicates(); d != 0 {
			t.Fatalf("%s: %d messages delivered twice, though every one was marked", what, d)
		}
	}
	type member struct {
		cg   *consumergroup.ConsumerGroup
		done <-chan struct{}
	}
	ids := 0
	start := func(s consumergroup.OffsetStorage) member {
		t.Helper()
		ids++
		cg := join(t, group, []string{topic}, storageConfig(s))
		return member{cg, consume(t, ids, cg, l)}
	}
	stop := func(m member) {
		t.Helper()
		closeGroup(t, m.cg)
		<-m.done
	}

	a, b := start(consumergroup.OffsetStorageZookeeper), start(consumergroup.OffsetStorageZookeeper)
	step("zookeeper")

	stop(a)
	a = start(consumergroup.OffsetStorageDual)
	step("dual + zookeeper")
	stop(b)
	b = start(consumergroup.OffsetStorageDual)
	step("dual")
	waitKafkaOffsets(t, group, topic, total, 10*time.Second)

	stop(a)
	a = start(consumergroup.OffsetStorageKafka)
	step("kafka + dual")
	stop(b)
	b = start(consumergroup.OffsetStorageKafka)
	step("kafka")

	stop(b)
	b = start(consumergroup.OffsetStorageDual)
	step("kafka + dual (rollback)")
	stop(b)
	b = start(consumergroup.OffsetStorageKafka)
	step("kafka again")

	stop(a)
	stop(b)
	waitKafkaOffsets(t, group, topic, total, time.Second) // Close committed everything

	ids++
	stopSarama := saramaGroup(t, group, []string{topic}, ids, l)
	step("sarama.ConsumerGroup")
	stopSarama()
	waitKafkaOffsets(t, group, topic, total, time.Second)

	if m := l.missing(topic, total); m != 0 {
		t.Errorf("%d messages never delivered", m)
	}
	t.Logf("total: %d produced over %d partitions, %d delivered, %d duplicates", produced, partitions, l.distinct(), l.duplicates())
	if rep := h.assert(expectation{produced: total}); rep.dups != 0 {
		t.Errorf("history: %d duplicates (%v), though every message was marked", rep.dups, rep.dupsBy)
	}
}

// TestIntegrationStorageReset: Offsets.ResetOffsets deletes the group's
// offsets, so the next member starts again at Offsets.Initial (the oldest
// offset) and commits from there. With kafka storage it deletes the
// group's offsets in Kafka; with ZooKeeper storage, the group's offset
// nodes as the member joins (fenced: each partition's epoch moves with it).
func TestIntegrationStorageReset(t *testing.T) {
	testenv.Integration(t)
	cases := []struct {
		storage consumergroup.OffsetStorage
		group   string // the group name's prefix
		// waitOffsets waits until the storage holds want for the group.
		waitOffsets func(t testing.TB, group, topic string, want map[int32]int64)
	}{{
		storage: consumergroup.OffsetStorageKafka,
		group:   "kreset",
		waitOffsets: func(t testing.TB, group, topic string, want map[int32]int64) {
			waitKafkaOffsets(t, group, topic, want, time.Second)
		},
	}, {
		storage:     consumergroup.OffsetStorageZookeeper,
		group:       "zreset",
		waitOffsets: waitZookeeperOffsets,
	}}
	for _, tc := range cases {
		t.Run(string(tc.storage), func(t *testing.T) {
			const partitions = 2
			topic := newTopic(t, partitions)
			group := testenv.UniqueName(tc.group)
			counts := produceTo(t, topic, map[int32]int{0: 5, 1: 4})

			first := newLedger()
			h := recordDeliveries(t, group, topic, partitions, first)
			cg := join(t, group, []string{topic}, storageConfig(tc.storage))
			done := consume(t, 0, cg, first)
			waitFor(t, 20*time.Second, "every message delivered", func() bool { return first.distinct() == 9 })
			closeGroup(t, cg)
			<-done
			tc.waitOffsets(t, group, topic, map[int32]int64{0: 5, 1: 4})

			cfg := storageConfig(tc.storage)
			cfg.Offsets.ResetOffsets = true
			second := newLedger()
			h.attach(second)
			h.reset(allPartitionsReset, -1)
			cg = join(t, group, []string{topic}, cfg)
			done = consume(t, 1, cg, second)
			waitFor(t, 20*time.Second, "every message delivered again after the reset", func() bool { return second.distinct() == 9 })
			closeGroup(t, cg)
			<-done
			if d := second.duplicates(); d != 0 {
				t.Errorf("%d duplicates after the reset", d)
			}
			tc.waitOffsets(t, group, topic, map[int32]int64{0: 5, 1: 4})
			if rep := h.assert(expectation{produced: counts}); rep.dups != rep.dupsBy[dupReset] || rep.dups != 9 {
				t.Errorf("history: duplicates %v, want the 9 messages delivered again after the reset", rep.dupsBy)
			}
		})
	}
}
