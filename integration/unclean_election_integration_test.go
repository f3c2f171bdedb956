package integration

import (
	"errors"
	"fmt"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/IBM/sarama"

	"github.com/zkgroup/kafka/consumergroup"
	"github.com/zkgroup/kafka/internal/testenv"
)

// An unclean leader election truncates the log below the group's position:
// the partition's leader (broker 1) took messages its follower (broker 2,
// stopped) never got, the group read them, then the leader stopped and the
// stale follower became leader with the shorter log. The group reports a
// *TruncationError with the position it read at and the new log's end,
// and reads on from that end: every message produced after the election is
// consumed once the truncation is found. Before, the partition fell back to sarama's partition
// consumer, whose open went to Offsets.Initial: the whole log read again
// (oldest), or the messages in between skipped (newest).
//
// It needs three brokers (integration/brokers-tests.sh), which it stops
// and starts.
func TestIntegrationBrokersUncleanElectionTruncation(t *testing.T) {
	testenv.Integration(t)
	if len(testenv.KafkaAddrs()) < 3 {
		t.Skip("needs three brokers (KAFKA_ADDRS): run integration/brokers-tests.sh")
	}
	const leader, follower = 1, 2
	topic := testenv.UniqueName("unclean")
	admin := uncleanTopic(t, topic, leader, follower)

	cfg := testConfig()
	cfg.Consumer.Retry.Backoff = 500 * time.Millisecond
	cfg.Claim.RetryCooldown = 500 * time.Millisecond
	cg, err := consumergroup.JoinConsumerGroup(testenv.UniqueName("unclean-g"), []string{topic}, []string{testenv.ZKAddr()}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer cg.Close()
	truncated := make(chan *consumergroup.TruncationError, 1)
	go func() {
		for err := range cg.Errors() {
			var trunc *consumergroup.TruncationError
			if errors.As(err, &trunc) {
				select {
				case truncated <- trunc:
				default:
				}
			}
			t.Logf("error: %v", err)
		}
	}()
	got := make(map[string]int64) // value: offset read at
	var last int64 = -1
	take := func(until func() bool, within time.Duration) {
		t.Helper()
		deadline := time.After(within)
		for !until() {
			select {
			case m := <-cg.Messages():
				got[string(m.Value)] = m.Offset
				last = m.Offset
				if err := cg.CommitUpto(m); err != nil {
					t.Fatal(err)
				}
			case <-deadline:
				t.Fatalf("timed out after %v; last offset read %d, %d messages", within, last, len(got))
			}
		}
	}

	produceAcks(t, topic, sarama.WaitForAll, "in-sync", 10) // offsets 0-9 on both brokers
	take(func() bool { return last >= 9 }, 30*time.Second)

	testenv.Stack(t, "stop-broker", strconv.Itoa(follower))       // a controlled shutdown: out of the ISR at once
	produceAcks(t, topic, sarama.WaitForLocal, "leader-only", 20) // offsets 10-29 on the leader alone
	take(func() bool { return last >= 29 }, 30*time.Second)
	time.Sleep(500 * time.Millisecond) // the group commits 30 (Offsets.CommitInterval 100 ms)

	testenv.Stack(t, "stop-broker", strconv.Itoa(leader))
	startBrokerAlone(t, follower) // elected uncleanly, its log ends at 10
	defer testenv.Stack(t, "start-broker", strconv.Itoa(leader))
	waitLeader(t, admin, topic, follower)

	var trunc *consumergroup.TruncationError
	select {
	case trunc = <-truncated:
	case <-time.After(60 * time.Second):
		t.Fatalf("no *TruncationError in 60 s; last offset read %d", last)
	}
	if trunc.Topic != topic || trunc.Partition != 0 || trunc.Position != 30 || trunc.LogEnd != 10 {
		t.Fatalf("reported %+v, want %s/0 at 30, log end 10", trunc, topic)
	}
	// Produced once the truncation is found: what the new leader took
	// before that, below the log end found, is not read (see
	// TruncationError).
	produceAcks(t, topic, sarama.WaitForLocal, "after-election", 5) // offsets 10-14 on the new leader
	take(func() bool {
		for i := range 5 {
			if _, ok := got[fmt.Sprintf("after-election-%d", i)]; !ok {
				return false
			}
		}
		return true
	}, 60*time.Second)
	for i := range 5 {
		if o := got[fmt.Sprintf("after-election-%d", i)]; o != int64(10+i) {
			t.Errorf("after-election-%d read at offset %d, want %d", i, o, 10+i)
		}
	}
}

// startBrokerAlone starts broker id while another one is stopped:
// stack.sh start-broker starts it, then fails waiting for every broker; the
// caller waits for what it needs of id.
func startBrokerAlone(t *testing.T, id int) {
	t.Helper()
	out, err := exec.Command("./stack.sh", "start-broker", strconv.Itoa(id)).CombinedOutput()
	if err != nil && !strings.Contains(string(out), "exited") {
		t.Fatalf("stack.sh start-broker %d: %v\n%s", id, err, out)
	}
}

// uncleanTopic creates topic with one partition on brokers leader (the
// preferred leader) and follower, unclean leader election enabled and one
// in-sync replica enough, waits until leader leads it, and deletes it at
// the end. It returns an admin client, closed at the end.
func uncleanTopic(t *testing.T, topic string, leader, follower int32) sarama.ClusterAdmin {
	t.Helper()
	admin, err := sarama.NewClusterAdmin(testenv.KafkaAddrs(), testConfig().Config)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = admin.Close() })
	yes, one := "true", "1"
	detail := &sarama.TopicDetail{
		NumPartitions: -1, ReplicationFactor: -1,
		ReplicaAssignment: map[int32][]int32{0: {leader, follower}},
		ConfigEntries:     map[string]*string{"unclean.leader.election.enable": &yes, "min.insync.replicas": &one},
	}
	if err := admin.CreateTopic(topic, detail, false); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = admin.DeleteTopic(topic) })
	waitLeader(t, admin, topic, leader)
	return admin
}

// waitLeader waits up to 60 s until broker id leads topic's partition 0.
func waitLeader(t *testing.T, admin sarama.ClusterAdmin, topic string, id int32) {
	t.Helper()
	waitFor(t, 60*time.Second, fmt.Sprintf("broker %d to lead %s/0", id, topic), func() bool {
		md, err := admin.DescribeTopics([]string{topic})
		return err == nil && len(md) == 1 && len(md[0].Partitions) == 1 && md[0].Partitions[0].Leader == id
	})
}

// produceAcks sends n messages "<prefix>-<i>" to topic's partition 0 with
// acks, waiting for each.
func produceAcks(t *testing.T, topic string, acks sarama.RequiredAcks, prefix string, n int) {
	t.Helper()
	conf := sarama.NewConfig()
	conf.Producer.Return.Successes = true
	conf.Producer.RequiredAcks = acks
	conf.Producer.Retry.Max = 20
	conf.Producer.Retry.Backoff = 250 * time.Millisecond
	conf.Producer.Partitioner = sarama.NewManualPartitioner
	prod, err := sarama.NewSyncProducer(testenv.KafkaAddrs(), conf)
	if err != nil {
		t.Fatal(err)
	}
	defer prod.Close()
	for i := range n {
		msg := &sarama.ProducerMessage{Topic: topic, Partition: 0, Value: sarama.StringEncoder(fmt.Sprintf("%s-%d", prefix, i))}
		if _, _, err := prod.SendMessage(msg); err != nil {
			t.Fatalf("produce %s-%d: %v", prefix, i, err)
		}
	}
}
