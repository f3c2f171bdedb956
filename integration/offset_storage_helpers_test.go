package integration

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/IBM/sarama"

	"github.com/zkgroup/kafka/consumergroup"
	"github.com/zkgroup/kafka/internal/testenv"
)

// storageConfig is testConfig with Offsets.Storage set.
func storageConfig(s consumergroup.OffsetStorage) *consumergroup.Config {
	cfg := testConfig()
	cfg.Offsets.Storage = s
	return cfg
}

// kafkaOffsets returns the group's offsets committed to Kafka for
// partitions 0..partitions-1 of topic (-1: none).
func kafkaOffsets(t testing.TB, group, topic string, partitions int32) map[int32]int64 {
	t.Helper()
	client, err := sarama.NewClient(testenv.KafkaAddrs(), saramaConfig())
	if err != nil {
		t.Fatalf("client: %v", err)
	}
	defer client.Close()
	admin, err := sarama.NewClusterAdminFromClient(client)
	if err != nil {
		t.Fatalf("admin: %v", err)
	}
	var ps []int32
	for p := range partitions {
		ps = append(ps, p)
	}
	resp, err := admin.ListConsumerGroupOffsets(group, map[string][]int32{topic: ps})
	if err != nil {
		t.Fatalf("list offsets of %s: %v", group, err)
	}
	out := make(map[int32]int64)
	for _, p := range ps {
		b := resp.GetBlock(topic, p)
		if b == nil || !errors.Is(b.Err, sarama.ErrNoError) {
			t.Fatalf("offset of %s for %s/%d: %+v", group, topic, p, b)
		}
		out[p] = b.Offset
	}
	return out
}

// waitKafkaOffsets waits until Kafka holds want (every partition of it) as
// the group's committed offsets of topic.
func waitKafkaOffsets(t testing.TB, group, topic string, want map[int32]int64, timeout time.Duration) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		got := kafkaOffsets(t, group, topic, int32(len(want)))
		ok := true
		for p, w := range want {
			if got[p] != w {
				ok = false
			}
		}
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("after %v: Kafka holds %v as %s's offsets of %s, want %v", timeout, got, group, topic, want)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// groupCommandRow is one partition's row of kafka-consumer-groups.sh
// --describe.
type groupCommandRow struct {
	current, logEnd, lag int64
}

// groupCommandLib returns the folder of the stack's jars holding Kafka's
// ConsumerGroupCommand (kafka-consumer-groups.sh), located by STACK_CACHE
// (default integration/.cache). It skips t when java or the tools jar is
// missing.
func groupCommandLib(t testing.TB) string {
	t.Helper()
	if _, err := exec.LookPath("java"); err != nil {
		t.Skip("java is not installed: cannot run Kafka's kafka-consumer-groups.sh")
	}
	cache := os.Getenv("STACK_CACHE")
	if cache == "" {
		cache = filepath.Join("..", "integration", ".cache")
	}
	lib := filepath.Join(cache, "lib")
	if jars, _ := filepath.Glob(filepath.Join(lib, "kafka-tools-[0-9]*.jar")); len(jars) == 0 {
		t.Skipf("no kafka-tools jar in %s (set STACK_CACHE): it holds ConsumerGroupCommand; integration/stack/pom.xml lists it, "+
			"so a cache fetched by stack.sh since has it (delete %s/.complete to fetch again)", lib, lib)
	}
	return lib
}

// describeGroup runs Kafka's kafka-consumer-groups.sh --describe (its class,
// ConsumerGroupCommand, from the jars in lib) and returns its rows for
// topic by partition.
func describeGroup(t testing.TB, lib, group, topic string) map[int32]groupCommandRow {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "java", "-cp", filepath.Join(lib, "*"),
		"org.apache.kafka.tools.consumer.group.ConsumerGroupCommand",
		"--bootstrap-server", testenv.KafkaAddrs()[0], "--describe", "--group", group)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("kafka-consumer-groups --describe --group %s: %v\n%s", group, err, out)
	}
	t.Logf("kafka-consumer-groups --describe --group %s:\n%s", group, out)
	rows := make(map[int32]groupCommandRow)
	for _, line := range strings.Split(string(out), "\n") {
		f := strings.Fields(line)
		// GROUP TOPIC PARTITION CURRENT-OFFSET LOG-END-OFFSET LAG CONSUMER-ID HOST CLIENT-ID
		if len(f) < 6 || f[0] != group || f[1] != topic {
			continue
		}
		p, err1 := strconv.ParseInt(f[2], 10, 32)
		cur, err2 := strconv.ParseInt(f[3], 10, 64)
		end, err3 := strconv.ParseInt(f[4], 10, 64)
		lag, err4 := strconv.ParseInt(f[5], 10, 64)
		if err := errors.Join(err1, err2, err3, err4); err != nil {
			t.Fatalf("unexpected row %q: %v", line, err)
		}
		rows[int32(p)] = groupCommandRow{current: cur, logEnd: end, lag: lag}
	}
	return rows
}

// saramaGroup runs a plain, broker-coordinated sarama.ConsumerGroup named
// group over topics, recording every message in l as consumer id and
// marking it. stop cancels it and closes the group, which commits what was
// marked.
func saramaGroup(t testing.TB, group string, topics []string, id int, l *ledger) (stop func()) {
	t.Helper()
	cfg := saramaConfig()
	cfg.Consumer.Offsets.Initial = sarama.OffsetOldest
	cfg.Consumer.Offsets.AutoCommit.Interval = 100 * time.Millisecond
	cfg.Consumer.Return.Errors = true
	cg, err := sarama.NewConsumerGroup(testenv.KafkaAddrs(), group, cfg)
	if err != nil {
		t.Fatalf("sarama consumer group %s: %v", group, err)
	}
	return runConsumeLoop(t, "sarama group", cg, topics, &ledgerHandler{id: id, l: l})
}

// waitZookeeperOffsets waits until ZooKeeper holds want (every partition
// of it) as the group's committed offsets of topic.
func waitZookeeperOffsets(t testing.TB, group, topic string, want map[int32]int64) {
	t.Helper()
	cg := zkClient(t).Consumergroup(group)
	got := make(map[int32]int64)
	waitFor(t, 10*time.Second, fmt.Sprintf("ZooKeeper to hold %v as %s's offsets of %s", want, group, topic), func() bool {
		for p := range want {
			o, err := cg.FetchOffset(topic, p)
			if err != nil {
				t.Fatalf("offset of %s for %s/%d: %v", group, topic, p, err)
			}
			got[p] = o
		}
		return maps.Equal(got, want)
	})
}
