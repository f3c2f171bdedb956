package integration

import (
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/IBM/sarama"

	"github.com/zkgroup/kafka/consumergroup"
	"github.com/zkgroup/kafka/internal/testenv"
	"github.com/zkgroup/kafka/kazoo"
)

// Tests on a stack whose Kafka runs in KRaft mode (integration/kraft-tests.sh):
// ZooKeeper holds no broker and no topic, so the groups read the metadata
// from Kafka (testConfig sets Kafka.Brokers there).

// TestIntegrationKRaftZooKeeperHasNoMetadata: the stack really is one where
// upstream's way fails: no broker registered in ZooKeeper, and a group
// without Kafka.Brokers cannot join, with an error that names the fix; with
// it, the group joins.
func TestIntegrationKRaftZooKeeperHasNoMetadata(t *testing.T) {
	testenv.KRaftIntegration(t)
	kz, err := kazoo.NewKazooFromConnectionString(testenv.ZKAddr(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer kz.Close()
	if brokers, err := kz.BrokerList(); len(brokers) != 0 || err != nil && !errors.Is(err, kazoo.ErrNoNode) {
		t.Fatalf("brokers in ZooKeeper = %v, %v; want none on a KRaft stack", brokers, err)
	}
	topic := newTopic(t, 2)
	if topics, err := kz.Topics(); err == nil && len(topics) != 0 {
		t.Fatalf("ZooKeeper lists topics %v on a KRaft stack", topics)
	}

	cfg := testConfig()
	cfg.Kafka.Brokers = nil
	cg, err := consumergroup.JoinConsumerGroup(testenv.UniqueName("g"), []string{topic}, []string{testenv.ZKAddr()}, cfg)
	if err == nil {
		closeGroup(t, cg)
		t.Fatal("joined without Kafka.Brokers on a KRaft stack")
	}
	if !strings.Contains(err.Error(), "no Kafka broker is registered") || !strings.Contains(err.Error(), "Kafka.Brokers") {
		t.Errorf("error %q should say no broker is registered and name Kafka.Brokers", err)
	}

	counts := produce(t, topic, 20)
	l := newLedger()
	cg = join(t, testenv.UniqueName("g"), []string{topic}, nil)
	done := consume(t, 1, cg, l)
	waitFor(t, 30*time.Second, "20 messages", func() bool { return l.distinct() >= 20 })
	closeGroup(t, cg)
	<-done
	if m := l.missing(topic, counts); m != 0 {
		t.Errorf("%d messages never delivered", m)
	}
}

// TestIntegrationKRaftScenarios runs upstream's scenarios, the clean
// rebalance, the zombie and added partitions on the KRaft stack, with the
// metadata read from Kafka.
func TestIntegrationKRaftScenarios(t *testing.T) {
	testenv.KRaftIntegration(t)
	for name, test := range map[string]func(*testing.T){
		"MultipleTopicsSingleConsumer": TestIntegrationMultipleTopicsSingleConsumer,
		"SingleTopicParallelConsumers": TestIntegrationSingleTopicParallelConsumers,
		"ConsumerLeavesMidStream":      TestIntegrationConsumerLeavesMidStream,
		"OffsetsResumedAfterRestart":   TestIntegrationOffsetsResumedAfterRestart,
		"CleanRebalance":               TestIntegrationCleanRebalance,
		"Zombie":                       TestIntegrationZombie,
		"PartitionsAdded":              TestIntegrationPartitionsAdded,
	} {
		t.Run(name, test)
	}
}

// TestIntegrationKRaftTopicCreatedAfterJoin: a subscribed topic that does
// not exist is reported on Errors(), is not created by the group's
// metadata requests (the broker has auto.create.topics.enable on), and is
// consumed once it is created, within about one refresh interval.
func TestIntegrationKRaftTopicCreatedAfterJoin(t *testing.T) {
	testenv.KRaftIntegration(t)
	topic := testenv.UniqueName("late")
	group := testenv.UniqueName("g")
	l := newLedger()
	h := recordDeliveries(t, group, topic, 2, l)
	var mu sync.Mutex
	var reported []error
	cg := join(t, group, []string{topic}, nil)
	done := readGroup(cg, 1, l, 0, func(err error) {
		mu.Lock()
		reported = append(reported, err)
		mu.Unlock()
	})
	waitFor(t, 10*time.Second, "the missing topic to be reported", func() bool {
		mu.Lock()
		defer mu.Unlock()
		for _, err := range reported {
			var pe *consumergroup.PartitionError
			if errors.As(err, &pe) && pe.Topic == topic && errors.Is(err, sarama.ErrUnknownTopicOrPartition) {
				return true
			}
		}
		return false
	})
	time.Sleep(2 * kraftRefresh)     // two refreshes ask for the topic
	testenv.CreateTopic(t, topic, 2) // fails if the group's requests created it
	created := time.Now()
	counts := produce(t, topic, 100)
	waitFor(t, 60*time.Second, "the new topic's messages", func() bool { return l.distinct() >= 100 })
	closeGroup(t, cg)
	<-done
	if m := l.missing(topic, counts); m != 0 {
		t.Errorf("%d messages never delivered", m)
	}
	h.assert(expectation{produced: counts})
	first := l.all[0].at
	for _, d := range l.all {
		if d.at.Before(first) {
			first = d.at
		}
	}
	t.Logf("topic created after the join: first message %v after the topic had leaders (Kafka.RefreshInterval %v)",
		first.Sub(created).Round(time.Millisecond), kraftRefresh)
}
