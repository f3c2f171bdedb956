package main

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/IBM/sarama"

	"github.com/zkgroup/kafka/consumergroup"
	"github.com/zkgroup/kafka/internal/testenv"
	"github.com/zkgroup/kafka/kazoo"
)

func saramaConfig() *sarama.Config {
	cfg := sarama.NewConfig()
	cfg.Version = sarama.V2_8_0_0
	cfg.Producer.Return.Successes = true
	cfg.Producer.RequiredAcks = sarama.WaitForAll
	return cfg
}

// newTopic creates a fresh topic that is deleted after the test.
func newTopic(t *testing.T, partitions int32) string {
	t.Helper()
	name := testenv.UniqueName("offsets")
	testenv.CreateTopic(t, name, partitions)
	return name
}

// produceEach sends n messages to every partition; message i of a
// partition carries the timestamp base + i minutes (base zero: now).
func produceEach(t *testing.T, topic string, partitions int32, n int, base time.Time) {
	t.Helper()
	cfg := saramaConfig()
	cfg.Producer.Partitioner = sarama.NewManualPartitioner
	p, err := sarama.NewSyncProducer(testenv.KafkaAddrs(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	var msgs []*sarama.ProducerMessage
	for part := range partitions {
		for i := range n {
			m := &sarama.ProducerMessage{Topic: topic, Partition: part, Value: sarama.StringEncoder(fmt.Sprintf("%d-%d", part, i))}
			if !base.IsZero() {
				m.Timestamp = base.Add(time.Duration(i) * time.Minute)
			}
			msgs = append(msgs, m)
		}
	}
	if err := p.SendMessages(msgs); err != nil {
		t.Fatal(err)
	}
}

// cmdResult is one run of the command.
type cmdResult struct {
	code        int
	out, errOut string
}

// zkgo runs the command in-process against the stack: args[0] is the
// subcommand; the connection flags are added after it.
func zkgo(t *testing.T, args ...string) cmdResult {
	t.Helper()
	full := append([]string{args[0], "-zookeeper", testenv.ZKAddr(), "-brokers", strings.Join(testenv.KafkaAddrs(), ",")}, args[1:]...)
	var out, errOut bytes.Buffer
	code := run(full, &out, &errOut)
	t.Logf("zkgroup-offsets %s -> %d\n%s%s", strings.Join(args, " "), code, out.String(), errOut.String())
	return cmdResult{code, out.String(), errOut.String()}
}

// zkgoOK runs the command and fails the test unless it succeeds.
func zkgoOK(t *testing.T, args ...string) string {
	t.Helper()
	r := zkgo(t, args...)
	if r.code != 0 {
		t.Fatalf("zkgroup-offsets %q exited %d: %s", args, r.code, r.errOut)
	}
	return r.out
}

// zkgoFails runs the command and fails the test unless it exits with 1
// and its error contains every want.
func zkgoFails(t *testing.T, want []string, args ...string) {
	t.Helper()
	r := zkgo(t, args...)
	if r.code != 1 {
		t.Fatalf("zkgroup-offsets %q exited %d, want 1", args, r.code)
	}
	for _, w := range want {
		if !strings.Contains(r.errOut, w) {
			t.Errorf("zkgroup-offsets %q: error %q lacks %q", args, r.errOut, w)
		}
	}
}

// connectZK opens an operator's ZooKeeper connection for the test.
func connectZK(t *testing.T) *kazoo.Kazoo {
	t.Helper()
	kz, err := kazoo.NewKazooFromConnectionString(testenv.ZKAddr(), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { kz.Close() })
	return kz
}

// deleteGroupAfter removes the ZooKeeper group when the test ends.
func deleteGroupAfter(t *testing.T, kz *kazoo.Kazoo, group string) {
	t.Cleanup(func() {
		if err := kz.Consumergroup(group).Delete(); err != nil && !errors.Is(err, kazoo.ErrNoNode) {
			t.Logf("delete group %s: %v", group, err)
		}
	})
}

// offsetsOf reads a ZooKeeper group's committed offsets of one topic.
func offsetsOf(t *testing.T, kz *kazoo.Kazoo, group, topic string) map[int32]int64 {
	t.Helper()
	all, err := kz.Consumergroup(group).FetchAllOffsets()
	if err != nil {
		t.Fatal(err)
	}
	return all[topic]
}

func memberConfig() *consumergroup.Config {
	cfg := consumergroup.NewConfig()
	cfg.Version = sarama.V2_8_0_0
	cfg.Offsets.Initial = sarama.OffsetOldest
	cfg.Offsets.ProcessingTimeout = 5 * time.Second
	cfg.Offsets.CommitInterval = 50 * time.Millisecond
	cfg.Consumer.MaxWaitTime = 100 * time.Millisecond
	return cfg
}

// joinMember starts a group member (this library's consumer group) that
// is closed when the test ends.
func joinMember(t *testing.T, group, topic string) *consumergroup.ConsumerGroup {
	t.Helper()
	cg, err := consumergroup.JoinConsumerGroup(group, []string{topic}, []string{testenv.ZKAddr()}, memberConfig())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := cg.Close(); err != nil && !errors.Is(err, consumergroup.AlreadyClosing) {
			t.Errorf("close member: %v", err)
		}
	})
	return cg
}

// firstOffsets reads the member's messages, committing each, until it
// has seen a message of every partition in want, and returns the offset of
// the first message of each partition.
func firstOffsets(t *testing.T, cg *consumergroup.ConsumerGroup, partitions int32, timeout time.Duration) map[int32]int64 {
	t.Helper()
	first := make(map[int32]int64)
	deadline := time.After(timeout)
	for int32(len(first)) < partitions {
		select {
		case m := <-cg.Messages():
			if _, ok := first[m.Partition]; !ok {
				first[m.Partition] = m.Offset
			}
			_ = cg.CommitUpto(m)
		case err := <-cg.Errors():
			t.Logf("member: %v", err)
		case <-deadline:
			t.Fatalf("after %v the member delivered the first messages %v of %d partitions", timeout, first, partitions)
		}
	}
	return first
}

// waitFor polls cond every 20 ms until it holds or timeout passes.
func waitFor(t *testing.T, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", timeout, what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
