package main

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/IBM/sarama"

	"github.com/zkgroup/kafka/internal/testenv"
)

// adminOf returns a Kafka admin client for the test.
func adminOf(t *testing.T) sarama.ClusterAdmin {
	t.Helper()
	a, err := sarama.NewClusterAdmin(testenv.KafkaAddrs(), saramaConfig())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = a.Close() })
	return a
}

// kafkaHolds reads what Kafka's coordinator holds for group on topic.
func kafkaHolds(t *testing.T, a sarama.ClusterAdmin, group, topic string) map[int32]int64 {
	t.Helper()
	resp, err := a.ListConsumerGroupOffsets(group, nil)
	if err != nil {
		t.Fatal(err)
	}
	blocks := resp.Blocks
	if blocks == nil {
		if g := resp.GetGroup(group); g != nil {
			blocks = g.Blocks
		}
	}
	out := map[int32]int64{}
	for p, b := range blocks[topic] {
		if b.Offset >= 0 {
			out[p] = b.Offset
		}
	}
	return out
}

func setKafka(t *testing.T, a sarama.ClusterAdmin, group, topic string, offs map[int32]int64) {
	t.Helper()
	m := map[string]map[int32]sarama.OffsetAndMetadata{topic: {}}
	for p, o := range offs {
		m[topic][p] = sarama.OffsetAndMetadata{Offset: o, LeaderEpoch: -1}
	}
	if _, err := a.AlterConsumerGroupOffsets(group, m, nil); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = a.DeleteConsumerGroup(group) })
}

func equalOffsets(a, b map[int32]int64) bool {
	if len(a) != len(b) {
		return false
	}
	for p, o := range a {
		if bo, ok := b[p]; !ok || bo != o {
			return false
		}
	}
	return true
}

// describeCurrent runs Kafka's own kafka-consumer-groups.sh --describe
// from the stack's jars (STACK_CACHE) and returns CURRENT-OFFSET per
// partition of topic; ok is false when java or the jar is missing.
func describeCurrent(t *testing.T, group, topic string) (map[int32]int64, bool) {
	t.Helper()
	if _, err := exec.LookPath("java"); err != nil {
		return nil, false
	}
	lib := filepath.Join(os.Getenv("STACK_CACHE"), "lib")
	if jars, _ := filepath.Glob(filepath.Join(lib, "kafka-tools-[0-9]*.jar")); os.Getenv("STACK_CACHE") == "" || len(jars) == 0 {
		return nil, false
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, "java", "-cp", filepath.Join(lib, "*"),
		"org.apache.kafka.tools.consumer.group.ConsumerGroupCommand",
		"--bootstrap-server", testenv.KafkaAddrs()[0], "--describe", "--group", group).Output()
	if err != nil {
		t.Fatalf("kafka-consumer-groups --describe: %v\n%s", err, out)
	}
	t.Logf("kafka-consumer-groups --describe --group %s:\n%s", group, out)
	rows := map[int32]int64{}
	for _, line := range strings.Split(string(out), "\n") {
		f := strings.Fields(line)
		if len(f) < 6 || f[0] != group || f[1] != topic {
			continue
		}
		p, _ := strconv.ParseInt(f[2], 10, 32)
		cur, err := strconv.ParseInt(f[3], 10, 64)
		if err == nil {
			rows[int32(p)] = cur
		}
	}
	return rows, true
}

// showKafka runs show -storage kafka -json and returns committed offsets
// of topic and the warnings.
func showKafka(t *testing.T, group, topic string) (map[int32]int64, []string) {
	t.Helper()
	var st GroupState
	if err := json.Unmarshal([]byte(zkgoOK(t, "show", "-group", group, "-storage", "kafka", "-json")), &st); err != nil {
		t.Fatal(err)
	}
	out := map[int32]int64{}
	for _, p := range st.Partitions {
		if p.Topic == topic && p.Committed != nil {
			out[p.Partition] = *p.Committed
		}
	}
	return out, st.Warnings
}

// With -storage kafka, show prints what Kafka holds (as Kafka's own tools
// show it), reset and -by-duration write Kafka and leave ZooKeeper alone,
// list names the group, and delete removes both stores' offsets; writes
// are refused while a member is registered.
func TestIntegrationStorageKafka(t *testing.T) {
	testenv.Integration(t)
	topic := newTopic(t, 2)
	// Message i of each partition is stamped now-10m+i minutes.
	produceEach(t, topic, 2, 10, time.Now().Add(-10*time.Minute))
	group := testenv.UniqueName("cmd-kafka")
	kz := connectZK(t)
	deleteGroupAfter(t, kz, group)
	a := adminOf(t)

	setKafka(t, a, group, topic, map[int32]int64{0: 3, 1: 7})
	if err := kz.Consumergroup(group).ResetOffsetsTo(map[string]map[int32]int64{topic: {0: 1, 1: 9}}); err != nil {
		t.Fatal(err)
	}

	shown, warnings := showKafka(t, group, topic)
	if held := kafkaHolds(t, a, group, topic); !equalOffsets(shown, held) || !equalOffsets(held, map[int32]int64{0: 3, 1: 7}) {
		t.Fatalf("show -storage kafka = %v, Kafka holds %v", shown, held)
	}
	if len(warnings) != 1 || !strings.Contains(warnings[0], topic+"/1: ZooKeeper holds 9") {
		t.Errorf("warnings = %q, want one for %s/1", warnings, topic)
	}
	if described, ok := describeCurrent(t, group, topic); ok && !equalOffsets(shown, described) {
		t.Errorf("show -storage kafka = %v, kafka-consumer-groups --describe = %v", shown, described)
	} else if !ok {
		t.Log("kafka-consumer-groups.sh not reachable (java or STACK_CACHE's tools jar missing): compared with ListConsumerGroupOffsets only")
	}

	// The plan as JSON, a dry run: nothing written.
	var plan planDoc
	if err := json.Unmarshal([]byte(zkgoOK(t, "reset", "-group", group, "-storage", "kafka", "-topic", topic, "-json", "to", "2")), &plan); err != nil {
		t.Fatal(err)
	}
	if plan.Storage != "kafka" || plan.Execute || len(plan.Changes) != 2 || plan.Changes[1].After != 2 || *plan.Changes[1].Before != 7 {
		t.Errorf("plan = %+v", plan)
	}
	if held := kafkaHolds(t, a, group, topic); held[1] != 7 {
		t.Fatalf("a dry run wrote: Kafka holds %v", held)
	}

	zkgoOK(t, "reset", "-group", group, "-storage", "kafka", "-topic", topic, "-execute", "to", "2")
	if held := kafkaHolds(t, a, group, topic); !equalOffsets(held, map[int32]int64{0: 2, 1: 2}) {
		t.Errorf("after reset to 2 Kafka holds %v", held)
	}
	if zk := offsetsOf(t, kz, group, topic); !equalOffsets(zk, map[int32]int64{0: 1, 1: 9}) {
		t.Errorf("reset -storage kafka changed ZooKeeper: %v", zk)
	}

	// Message 5 is the first stamped at or after now-5m30s.
	zkgoOK(t, "reset", "-group", group, "-storage", "kafka", "-topic", topic, "-execute", "-by-duration", "5m30s")
	if held := kafkaHolds(t, a, group, topic); !equalOffsets(held, map[int32]int64{0: 5, 1: 5}) {
		t.Errorf("after -by-duration 5m30s Kafka holds %v, want 5 and 5", held)
	}
	if shown, _ := showKafka(t, group, topic); !equalOffsets(shown, map[int32]int64{0: 5, 1: 5}) {
		t.Errorf("show -storage kafka = %v after -by-duration", shown)
	}

	// export and import under kafka storage: Kafka's offsets, into
	// another group's Kafka offsets.
	file := filepath.Join(t.TempDir(), "offsets.json")
	zkgoOK(t, "export", "-group", group, "-storage", "kafka", "-o", file)
	other := testenv.UniqueName("cmd-kafka-copy")
	t.Cleanup(func() { _ = a.DeleteConsumerGroup(other) })
	zkgoOK(t, "import", "-group", other, "-storage", "kafka", "-execute", file)
	if held := kafkaHolds(t, a, other, topic); !equalOffsets(held, map[int32]int64{0: 5, 1: 5}) {
		t.Errorf("after import -storage kafka the copy holds %v, want 5 and 5", held)
	}

	if out := zkgoOK(t, "list"); !strings.Contains(out, group) {
		t.Errorf("list lacks %s", group)
	}

	zkgoOK(t, "delete", "-group", group, "-storage", "kafka", "-execute")
	if held := kafkaHolds(t, a, group, topic); len(held) != 0 {
		t.Errorf("after delete Kafka holds %v", held)
	}
	if zk := offsetsOf(t, kz, group, topic); len(zk) != 0 {
		t.Errorf("after delete ZooKeeper holds %v", zk)
	}
}

// Writing Kafka's offsets, and deleting, are refused while a member is
// registered, -force or not: Kafka knows nothing of its claims.
func TestIntegrationStorageRefusedWhileMembersRun(t *testing.T) {
	testenv.Integration(t)
	topic := newTopic(t, 1)
	produceEach(t, topic, 1, 5, time.Time{})
	group := testenv.UniqueName("cmd-members")
	kz := connectZK(t)
	deleteGroupAfter(t, kz, group)
	cg := joinMember(t, group, topic)
	firstOffsets(t, cg, 1, 30*time.Second)
	zkgoFails(t, []string{"members are registered"}, "reset", "-group", group, "-storage", "kafka", "-topic", topic, "-execute", "-force", "earliest")
	zkgoFails(t, []string{"members are registered"}, "reset", "-group", group, "-storage", "dual", "-topic", topic, "-execute", "earliest")
	zkgoFails(t, []string{"members are registered"}, "delete", "-group", group, "-execute")
}

// Under dual storage a backward reset sets both stores: a member starts at
// the higher one, so moving one alone would be undone.
func TestIntegrationStorageDualBackwardReset(t *testing.T) {
	testenv.Integration(t)
	topic := newTopic(t, 1)
	produceEach(t, topic, 1, 10, time.Time{})
	group := testenv.UniqueName("cmd-dual")
	kz := connectZK(t)
	deleteGroupAfter(t, kz, group)
	a := adminOf(t)
	setKafka(t, a, group, topic, map[int32]int64{0: 6})
	if err := kz.Consumergroup(group).ResetOffsetsTo(map[string]map[int32]int64{topic: {0: 8}}); err != nil {
		t.Fatal(err)
	}
	r := zkgo(t, "show", "-group", group, "-storage", "dual")
	if r.code != 0 || !strings.Contains(r.out, "under dual storage the higher one wins") {
		t.Errorf("show -storage dual: exit %d, no warning of the difference", r.code)
	}
	if out := zkgoOK(t, "reset", "-group", group, "-storage", "dual", "-topic", topic, "-execute", "to", "2"); !strings.Contains(out, "both ZooKeeper and Kafka are set") {
		t.Error("reset -storage dual does not say it sets both")
	}
	if held := kafkaHolds(t, a, group, topic); held[0] != 2 {
		t.Errorf("Kafka holds %v, want 2", held)
	}
	if zk := offsetsOf(t, kz, group, topic); zk[0] != 2 {
		t.Errorf("ZooKeeper holds %v, want 2", zk)
	}
}
