package kazoo

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/zkgroup/kafka/internal/testenv"
)

// Topics the stack (integration/stack.sh) creates, with their partition
// counts.
var stackTopics = map[string]int{
	"zkgroup.test.single":    1,
	"zkgroup.test.four":      4,
	"zkgroup.test.sixtyfour": 64,
}

func connectTopicTest(t *testing.T, chroot string) *Kazoo {
	t.Helper()
	conf := NewConfig()
	conf.Chroot = chroot
	kz, err := NewKazoo([]string{testenv.ZKAddr()}, conf)
	if err != nil {
		t.Fatalf("connect to %s (is integration/stack.sh up?): %v", testenv.ZKAddr(), err)
	}
	t.Cleanup(func() { kz.Close() })
	return kz
}

// topicTestChroot returns a Kazoo whose chroot is a fresh, unique path, for
// data no Kafka broker looks at. It is deleted when the test ends.
func topicTestChroot(t *testing.T) *Kazoo {
	t.Helper()
	root := connectTopicTest(t, "")
	chroot := "/zkgroup-test/" + testenv.UniqueName("kazoo-topic")
	if err := root.mkdirRecursive(chroot); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := root.deleteRecursive(chroot); err != nil {
			t.Errorf("cleanup: %v", err)
		}
	})
	return connectTopicTest(t, chroot)
}

func mustWrite(t *testing.T, kz *Kazoo, node, data string) {
	t.Helper()
	if err := kz.createOrUpdate(node, []byte(data), false); err != nil {
		t.Fatal(err)
	}
}

func registerFakeBrokers(t *testing.T, kz *Kazoo, ids ...int32) {
	t.Helper()
	for _, id := range ids {
		mustWrite(t, kz, kz.brokerPath(itoa(id)),
			fmt.Sprintf(`{"endpoints":["PLAINTEXT://broker%d:9092"],"host":"broker%d","port":9092,"version":5}`, id, id))
	}
}

func waitEvent(t *testing.T, w <-chan Event, want EventType, path string) {
	t.Helper()
	select {
	case ev, ok := <-w:
		if !ok {
			t.Fatal("watch closed without an event")
		}
		if ev.Type != want || ev.Path != path {
			t.Fatalf("got event %v on %s, want %v on %s", ev.Type, ev.Path, want, path)
		}
		if _, ok := <-w; ok {
			t.Fatal("watch delivered a second event")
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("no %v event on %s within 10s", want, path)
	}
}

func TestIntegrationTopicMetadataFromKafka(t *testing.T) {
	testenv.Integration(t)
	kz := connectTopicTest(t, "")

	topics, err := kz.Topics()
	if err != nil {
		t.Fatal(err)
	}
	if !slices.IsSortedFunc(topics, func(a, b *Topic) int { return strings.Compare(a.Name, b.Name) }) {
		t.Error("Topics() is not sorted by name")
	}
	if topics.Find("__nonexistent__") != nil {
		t.Error("Find found a topic that does not exist")
	}
	brokers, err := kz.Brokers()
	if err != nil {
		t.Fatal(err)
	}

	for name, count := range stackTopics {
		topic := topics.Find(name)
		if topic == nil {
			t.Fatalf("Topics() lacks %s (is integration/stack.sh up?)", name)
		}
		if ok, err := topic.Exists(); err != nil || !ok {
			t.Fatalf("%s.Exists() = %v, %v", name, ok, err)
		}
		partitions, err := topic.Partitions()
		if err != nil {
			t.Fatal(err)
		}
		if len(partitions) != count {
			t.Fatalf("%s has %d partitions, want %d", name, len(partitions), count)
		}
		for i, p := range partitions {
			if p.ID != int32(i) || p.Topic() != topic || p.Key() != fmt.Sprintf("%s/%d", name, i) {
				t.Fatalf("partition %d: id %d, key %s", i, p.ID, p.Key())
			}
			if _, ok := brokers[p.PreferredReplica()]; !ok {
				t.Errorf("%s: preferred replica %d is not a live broker", p.Key(), p.PreferredReplica())
			}
			state, err := p.State()
			if err != nil {
				t.Fatal(err)
			}
			if _, ok := brokers[state.Leader]; !ok {
				t.Errorf("%s: leader %d is not a live broker", p.Key(), state.Leader)
			}
			leader, err := p.Leader()
			if err != nil || leader != state.Leader {
				t.Errorf("%s: Leader() = %d, %v; State().Leader = %d", p.Key(), leader, err, state.Leader)
			}
			isr, err := p.ISR()
			if err != nil || len(isr) == 0 {
				t.Errorf("%s: ISR() = %v, %v", p.Key(), isr, err)
			}
			for _, id := range isr {
				if _, ok := brokers[id]; !ok {
					t.Errorf("%s: ISR member %d is not a live broker", p.Key(), id)
				}
			}
			if under, err := p.UnderReplicated(); err != nil || under {
				t.Errorf("%s: UnderReplicated() = %v, %v", p.Key(), under, err)
			}
			if pref, err := p.UsesPreferredReplica(); err != nil || !pref {
				t.Errorf("%s: UsesPreferredReplica() = %v, %v", p.Key(), pref, err)
			}
		}
		conf, err := topic.Config()
		if err != nil {
			t.Fatal(err)
		}
		if conf == nil {
			t.Errorf("%s: Config() returned nil", name)
		}
	}

	missing := kz.Topic(testenv.UniqueName("missing"))
	if ok, err := missing.Exists(); err != nil || ok {
		t.Errorf("Exists() of a missing topic = %v, %v", ok, err)
	}
	_, err = missing.Partitions()
	assertNoNode(t, err, kz.topicPath(missing.Name))
	_, err = missing.Config()
	assertNoNode(t, err, kz.topicConfigPath(missing.Name))
	_, err = missing.Partition(0, []int32{1}).Leader()
	assertNoNode(t, err, kz.partitionStatePath(missing.Name, 0))
	_, err = kz.Topic("zkgroup.test.four").Partition(4, []int32{1}).ISR()
	assertNoNode(t, err, kz.partitionStatePath("zkgroup.test.four", 4))
}

func assertNoNode(t *testing.T, err error, path string) {
	t.Helper()
	if !errors.Is(err, ErrNoNode) || !strings.Contains(fmt.Sprint(err), path) {
		t.Errorf("got %v, want ErrNoNode naming %s", err, path)
	}
}

func TestIntegrationTopicWatches(t *testing.T) {
	testenv.Integration(t)
	kz := topicTestChroot(t)

	// WatchTopics on a missing /brokers/topics names the path.
	if _, _, err := kz.WatchTopics(); !errors.Is(err, ErrNoNode) || !strings.Contains(err.Error(), kz.topicsPath()) {
		t.Fatalf("WatchTopics without /brokers/topics: %v", err)
	}
	mustWrite(t, kz, kz.topicPath("b"), `{"version":1,"partitions":{"0":[1]}}`)
	mustWrite(t, kz, kz.topicPath("a"), `{"version":1,"partitions":{"0":[1]}}`)

	list, w, err := kz.WatchTopics()
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 2 || list[0].Name != "a" || list[1].Name != "b" {
		t.Fatalf("WatchTopics() = %v", list)
	}
	mustWrite(t, kz, kz.topicPath("c"), `{"version":1,"partitions":{"0":[1]}}`)
	waitEvent(t, w, EventNodeChildrenChanged, kz.topicsPath())

	// WatchPartitions fires on a new assignment.
	topic := kz.Topic("a")
	parts, w, err := topic.WatchPartitions()
	if err != nil || len(parts) != 1 {
		t.Fatalf("WatchPartitions() = %v, %v", parts, err)
	}
	mustWrite(t, kz, kz.topicPath("a"), `{"version":1,"partitions":{"0":[1],"1":[1]}}`)
	waitEvent(t, w, EventNodeDataChanged, kz.topicPath("a"))
	if parts, err := topic.Partitions(); err != nil || len(parts) != 2 {
		t.Fatalf("after adding a partition: %v, %v", parts, err)
	}

	// Watch fires on deletion.
	w, err = topic.Watch()
	if err != nil {
		t.Fatal(err)
	}
	if err := kz.deleteRecursive(kz.topicPath("a")); err != nil {
		t.Fatal(err)
	}
	waitEvent(t, w, EventNodeDeleted, kz.topicPath("a"))

	// On a missing topic both fail naming the path and leave no watch.
	if _, err := topic.Watch(); !errors.Is(err, ErrNoNode) || !strings.Contains(err.Error(), kz.topicPath("a")) {
		t.Fatalf("Watch() of a missing topic: %v", err)
	}
	if _, w, err := topic.WatchPartitions(); !errors.Is(err, ErrNoNode) || w != nil {
		t.Fatalf("WatchPartitions() of a missing topic: %v, %v", w, err)
	}

	// A malformed assignment is reported with a watch, which fires when
	// the assignment is fixed.
	mustWrite(t, kz, kz.topicPath("b"), `{"partitions":{"0":[1],"2":[1]}}`)
	_, w, err = kz.Topic("b").WatchPartitions()
	assertMalformed(t, err, kz.topicPath("b"))
	if w == nil {
		t.Fatal("WatchPartitions on a malformed assignment returned no watch")
	}
	mustWrite(t, kz, kz.topicPath("b"), `{"partitions":{"0":[1],"1":[1]}}`)
	waitEvent(t, w, EventNodeDataChanged, kz.topicPath("b"))
}

func TestIntegrationTopicMalformedZnodes(t *testing.T) {
	testenv.Integration(t)
	kz := topicTestChroot(t)

	assignments := map[string]string{
		"not-json":     `{"partitions":`,
		"non-numeric":  `{"partitions":{"zero":[1]}}`,
		"gap":          `{"partitions":{"0":[1],"2":[1]}}`,
		"no-replicas":  `{"partitions":{"0":[]}}`,
		"negative-id":  `{"partitions":{"-1":[1]}}`,
		"negative-rep": `{"partitions":{"0":[-1]}}`,
		"empty":        ``,
	}
	for name, data := range assignments {
		mustWrite(t, kz, kz.topicPath(name), data)
		_, err := kz.Topic(name).Partitions()
		assertMalformed(t, err, kz.topicPath(name))
	}

	mustWrite(t, kz, kz.topicPath("ok"), `{"partitions":{"0":[1]}}`)
	states := []string{`{"leader":1`, `{"isr":[1]}`, `{"leader":1,"isr":[-1]}`, `{"leader":-5,"isr":[]}`, ``}
	p := kz.Topic("ok").Partition(0, []int32{1})
	statePath := kz.partitionStatePath("ok", 0)
	for _, data := range states {
		mustWrite(t, kz, statePath, data)
		_, err := p.State()
		assertMalformed(t, err, statePath)
		_, err = p.Leader()
		assertMalformed(t, err, statePath)
		_, err = p.ISR()
		assertMalformed(t, err, statePath)
		_, err = p.UnderReplicated()
		assertMalformed(t, err, statePath)
		_, err = p.UsesPreferredReplica()
		assertMalformed(t, err, statePath)
	}

	// A partition without a leader is not malformed.
	mustWrite(t, kz, statePath, `{"controller_epoch":2,"leader":-1,"version":1,"leader_epoch":5,"isr":[1]}`)
	if leader, err := p.Leader(); err != nil || leader != -1 {
		t.Errorf("Leader() = %d, %v; want -1", leader, err)
	}
	if pref, err := p.UsesPreferredReplica(); err != nil || pref {
		t.Errorf("UsesPreferredReplica() without a leader = %v, %v", pref, err)
	}
	mustWrite(t, kz, statePath, `{"leader":1,"isr":[]}`)
	if under, err := kz.Topic("ok").Partition(0, []int32{1, 2}).UnderReplicated(); err != nil || !under {
		t.Errorf("UnderReplicated() = %v, %v; want true", under, err)
	}

	configPath := kz.topicConfigPath("ok")
	for _, data := range []string{`{"config":`, `{"config":{"retention.ms":1}}`, `[]`} {
		mustWrite(t, kz, configPath, data)
		_, err := kz.Topic("ok").Config()
		assertMalformed(t, err, configPath)
	}
}

func TestIntegrationTopicInvalidNames(t *testing.T) {
	testenv.Integration(t)
	kz := topicTestChroot(t)
	registerFakeBrokers(t, kz, 1)

	for _, name := range []string{"", ".", "..", "../ids", "a/b", "a b", strings.Repeat("x", 250)} {
		topic := kz.Topic(name)
		check := func(what string, err error) {
			t.Helper()
			if !errors.Is(err, ErrInvalidTopicName) || !strings.Contains(err.Error(), fmt.Sprintf("%q", name)) {
				t.Errorf("%s with name %q: %v", what, name, err)
			}
		}
		_, err := topic.Exists()
		check("Exists", err)
		_, err = topic.Partitions()
		check("Partitions", err)
		_, _, err = topic.WatchPartitions()
		check("WatchPartitions", err)
		_, err = topic.Watch()
		check("Watch", err)
		_, err = topic.Config()
		check("Config", err)
		_, err = topic.Partition(0, nil).State()
		check("State", err)
		check("CreateTopic", kz.CreateTopic(name, 1, 1, nil))
		check("DeleteTopic", kz.DeleteTopic(name))
		check("DeleteTopicSync", kz.DeleteTopicSync(name, time.Second))
		check("DeleteTopicContext", kz.DeleteTopicContext(context.Background(), name))
	}
	// Nothing was written for any of them.
	if ok, _ := kz.exists(kz.deleteTopicsPath()); ok {
		t.Error("an invalid name reached /admin/delete_topics")
	}
	if ok, _ := kz.exists(kz.topicsPath()); ok {
		t.Error("an invalid name reached /brokers/topics")
	}
}

func TestIntegrationCreateTopicChroot(t *testing.T) {
	testenv.Integration(t)
	kz := topicTestChroot(t)

	// No brokers at all.
	if err := kz.CreateTopic("t", 1, 1, nil); !errors.Is(err, ErrNoNode) {
		t.Fatalf("CreateTopic without /brokers/ids: %v", err)
	}
	registerFakeBrokers(t, kz, 3, 1, 2)

	conf := map[string]string{"retention.ms": "604800000", "cleanup.policy": "compact"}
	if err := kz.CreateTopic("orders.v1", 12, 2, conf); err != nil {
		t.Fatal(err)
	}
	topic := kz.Topic("orders.v1")
	parts, err := topic.Partitions()
	if err != nil {
		t.Fatal(err)
	}
	if len(parts) != 12 {
		t.Fatalf("%d partitions, want 12", len(parts))
	}
	leaders := map[int32]int{}
	for _, p := range parts {
		if len(p.Replicas) != 2 || p.Replicas[0] == p.Replicas[1] {
			t.Fatalf("%s: replicas %v", p.Key(), p.Replicas)
		}
		for _, r := range p.Replicas {
			if r < 1 || r > 3 {
				t.Fatalf("%s: replica on unknown broker %d", p.Key(), r)
			}
		}
		leaders[p.Replicas[0]]++
	}
	if !reflect.DeepEqual(leaders, map[int32]int{1: 4, 2: 4, 3: 4}) {
		t.Errorf("leaders not spread evenly: %v", leaders)
	}
	if got, err := topic.Config(); err != nil || !reflect.DeepEqual(got, conf) {
		t.Errorf("Config() = %v, %v; want %v", got, err, conf)
	}

	// Errors, none of which may touch the existing topic's config.
	tests := []struct {
		name      string
		parts, rf int
		is        error
	}{
		{"orders.v1", 3, 1, ErrTopicExists},
		{"orders_v1", 1, 1, ErrInvalidTopicName}, // collides with orders.v1
		{"fresh", 0, 1, ErrInvalidPartitionCount},
		{"fresh", -1, 1, ErrInvalidPartitionCount},
		{"fresh", MaxCreatePartitions + 1, 1, ErrInvalidPartitionCount},
		{"fresh", 1, 0, ErrInvalidReplicationFactor},
		{"fresh", 1, 4, ErrInvalidReplicationFactor},
	}
	for _, tt := range tests {
		err := kz.CreateTopic(tt.name, tt.parts, tt.rf, map[string]string{"retention.ms": "1"})
		// kazoo-go's sentinels come bare (==); ErrInvalidTopicName, which
		// kazoo-go did not have, comes wrapped with the name.
		if bare := tt.is != ErrInvalidTopicName; (bare && err != tt.is) || !errors.Is(err, tt.is) {
			t.Errorf("CreateTopic(%q, %d, %d) = %v, want %v", tt.name, tt.parts, tt.rf, err, tt.is)
		}
	}
	if err := kz.CreateTopic("fresh", 1, 1, map[string]string{"": "x"}); err == nil {
		t.Error("CreateTopic accepted an empty config key")
	}
	if got, _ := topic.Config(); !reflect.DeepEqual(got, conf) {
		t.Errorf("a failed CreateTopic changed the config of the existing topic: %v", got)
	}
	if ok, _ := kz.Topic("fresh").Exists(); ok {
		t.Error("a failed CreateTopic created the topic")
	}

	// A nil config is stored as {}, and a stale config znode is replaced.
	mustWrite(t, kz, kz.topicConfigPath("stale"), `{"version":1,"config":{"retention.ms":"1"}}`)
	if err := kz.CreateTopic("stale", 1, 3, nil); err != nil {
		t.Fatal(err)
	}
	if got, err := kz.Topic("stale").Config(); err != nil || len(got) != 0 {
		t.Errorf("Config() after create with nil config = %v, %v", got, err)
	}
	if parts, err := kz.Topic("stale").Partitions(); err != nil || len(parts[0].Replicas) != 3 {
		t.Errorf("Partitions() = %v, %v", parts, err)
	}

	// A topic marked for deletion cannot be created again yet.
	mustWrite(t, kz, kz.deleteTopicPath("doomed"), "")
	err = kz.CreateTopic("doomed", 1, 1, nil)
	if err != ErrTopicExists {
		t.Errorf("CreateTopic of a topic marked for deletion: %v", err)
	}

	// Concurrent creates: exactly one wins.
	var wg sync.WaitGroup
	errs := make([]error, 8)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = kz.CreateTopic("race", 4, 1, map[string]string{"n": fmt.Sprint(i)})
		}()
	}
	wg.Wait()
	won := 0
	for _, err := range errs {
		switch {
		case err == nil:
			won++
		case err != ErrTopicExists:
			t.Errorf("concurrent CreateTopic: %v", err)
		}
	}
	if won != 1 {
		t.Errorf("%d concurrent creates succeeded, want 1", won)
	}
	got, err := kz.Topic("race").Config()
	if err != nil {
		t.Fatal(err)
	}
	if i := slices.IndexFunc(errs, func(e error) bool { return e == nil }); i >= 0 && got["n"] != fmt.Sprint(i) {
		t.Errorf("the config is %v, but creator %d won", got, i)
	}
}

func TestIntegrationDeleteTopicChroot(t *testing.T) {
	testenv.Integration(t)
	kz := topicTestChroot(t)
	registerFakeBrokers(t, kz, 1)

	create := func(name string) {
		t.Helper()
		if err := kz.CreateTopic(name, 2, 1, nil); err != nil {
			t.Fatal(err)
		}
	}
	// controller plays Kafka's controller: after a delay it deletes what
	// it is told to, in Kafka's order, the mark last.
	controller := func(name string, deleteTopic bool) chan struct{} {
		done := make(chan struct{})
		go func() {
			defer close(done)
			time.Sleep(200 * time.Millisecond)
			if deleteTopic {
				if err := kz.deleteRecursive(kz.topicPath(name)); err != nil {
					t.Error(err)
				}
				if err := kz.deleteRecursive(kz.topicConfigPath(name)); err != nil {
					t.Error(err)
				}
			}
			if err := kz.deleteRecursive(kz.deleteTopicPath(name)); err != nil {
				t.Error(err)
			}
		}()
		return done
	}

	// DeleteTopic only marks; a second mark is refused.
	create("a")
	if err := kz.DeleteTopic("a"); err != nil {
		t.Fatal(err)
	}
	if ok, _ := kz.exists(kz.deleteTopicPath("a")); !ok {
		t.Fatal("DeleteTopic did not create the mark")
	}
	err := kz.DeleteTopic("a")
	if err != ErrTopicMarkedForDelete {
		t.Fatalf("second DeleteTopic: %v", err)
	}
	if err := kz.DeleteTopicSync("a", time.Second); err != ErrTopicMarkedForDelete {
		t.Fatalf("DeleteTopicSync of a marked topic: %v", err)
	}

	// DeleteTopicSync waits for the controller.
	create("b")
	done := controller("b", true)
	start := time.Now()
	if err := kz.DeleteTopicSync("b", 10*time.Second); err != nil {
		t.Fatalf("DeleteTopicSync: %v", err)
	}
	if time.Since(start) < 150*time.Millisecond {
		t.Error("DeleteTopicSync returned before the controller finished")
	}
	<-done
	for _, p := range []string{kz.topicPath("b"), kz.topicConfigPath("b"), kz.deleteTopicPath("b")} {
		if ok, _ := kz.exists(p); ok {
			t.Errorf("%s still exists", p)
		}
	}

	// A controller that drops the mark but keeps the topic.
	create("c")
	done = controller("c", false)
	err = kz.DeleteTopicSync("c", 10*time.Second)
	<-done
	if !errors.Is(err, ErrDeletionRefused) || !strings.Contains(err.Error(), kz.topicPath("c")) {
		t.Fatalf("DeleteTopicSync when the controller refuses: %v", err)
	}

	// No controller: a timeout, and a cancelled context.
	create("d")
	start = time.Now()
	err = kz.DeleteTopicSync("d", 300*time.Millisecond)
	if err != ErrDeletionTimedOut {
		t.Fatalf("DeleteTopicSync without a controller: %v", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("timeout of 300ms took %s", d)
	}
	ctx, cancel := context.WithCancel(context.Background())
	create("e")
	go func() { time.Sleep(100 * time.Millisecond); cancel() }()
	if err := kz.DeleteTopicContext(ctx, "e"); !errors.Is(err, ErrDeletionTimedOut) || !errors.Is(err, context.Canceled) {
		t.Fatalf("DeleteTopicContext with a cancelled context: %v", err)
	}

	// Deleting a topic that does not exist marks it, as kazoo-go does; the
	// controller drops the mark and the wait succeeds.
	done = controller("ghost", false)
	if err := kz.DeleteTopicContext(context.Background(), "ghost"); err != nil {
		t.Fatalf("DeleteTopicContext of a missing topic: %v", err)
	}
	<-done
}

// TestIntegrationCreateDeleteTopicKafka creates a topic through ZooKeeper,
// checks that the real Kafka controller takes it up, and deletes it again.
func TestIntegrationCreateDeleteTopicKafka(t *testing.T) {
	testenv.Integration(t)
	kz := connectTopicTest(t, "")
	name := testenv.UniqueName("kazoo.admin")
	conf := map[string]string{"retention.ms": "604800000", "retention.bytes": "1000000000"}

	if err := kz.CreateTopic(name, 4, 1, conf); err != nil {
		t.Fatal(err)
	}
	deleted := false
	t.Cleanup(func() {
		if !deleted {
			_ = kz.DeleteTopicSync(name, 30*time.Second)
		}
	})
	if err := kz.CreateTopic(name, 4, 1, nil); err != ErrTopicExists {
		t.Errorf("second CreateTopic: %v", err)
	}
	if err := kz.CreateTopic(strings.ReplaceAll(name, ".", "_"), 1, 1, nil); !errors.Is(err, ErrInvalidTopicName) {
		t.Errorf("CreateTopic of a colliding name: %v", err)
	}
	if err := kz.CreateTopic(testenv.UniqueName("kazoo.admin"), 1, 2, nil); err != ErrInvalidReplicationFactor {
		t.Errorf("CreateTopic with more replicas than brokers: %v", err)
	}

	// The controller elects a leader for every partition.
	topic := kz.Topic(name)
	deadline := time.Now().Add(30 * time.Second)
	for p := int32(0); p < 4; p++ {
		for {
			leader, err := topic.Partition(p, []int32{1}).Leader()
			if err == nil && leader == 1 {
				break
			}
			if !errors.Is(err, ErrNoNode) && err != nil {
				t.Fatal(err)
			}
			if time.Now().After(deadline) {
				t.Fatalf("partition %d of %s got no leader within 30s (last: %d, %v)", p, name, leader, err)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	// Kafka rewrites the assignment (adding its topic id); it still parses.
	parts, err := topic.Partitions()
	if err != nil || len(parts) != 4 {
		t.Fatalf("Partitions() = %v, %v", parts, err)
	}
	if got, err := topic.Config(); err != nil || !reflect.DeepEqual(got, conf) {
		t.Errorf("Config() = %v, %v; want %v", got, err, conf)
	}

	if err := kz.DeleteTopicSync(name, 60*time.Second); err != nil {
		t.Fatalf("DeleteTopicSync: %v", err)
	}
	deleted = true
	if ok, err := topic.Exists(); err != nil || ok {
		t.Errorf("Exists() after DeleteTopicSync = %v, %v", ok, err)
	}
	_, err = topic.Config()
	assertNoNode(t, err, kz.topicConfigPath(name))

	// The name can be used again at once.
	if err := kz.CreateTopic(name, 1, 1, nil); err != nil {
		t.Fatalf("re-create after DeleteTopicSync: %v", err)
	}
	if err := kz.DeleteTopicSync(name, 60*time.Second); err != nil {
		t.Fatalf("second DeleteTopicSync: %v", err)
	}
}
