package main

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/IBM/sarama"
	metrics "github.com/rcrowley/go-metrics"

	"github.com/zkgroup/kafka/consumergroup"
	"github.com/zkgroup/kafka/internal/testenv"
)

// TestIntegrationScrape runs a real group and scrapes its metrics: each of
// the group's metrics is there with a plausible value.
func TestIntegrationScrape(t *testing.T) {
	testenv.Integration(t)
	topic := testenv.UniqueName("prom")
	admin, err := sarama.NewClusterAdmin(testenv.KafkaAddrs(), sarama.NewConfig())
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	if err := admin.CreateTopic(topic, &sarama.TopicDetail{NumPartitions: 2, ReplicationFactor: 1}, false); err != nil {
		t.Fatal(err)
	}
	defer admin.DeleteTopic(topic)
	pcfg := sarama.NewConfig()
	pcfg.Producer.Return.Successes = true
	prod, err := sarama.NewSyncProducer(testenv.KafkaAddrs(), pcfg)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 100 {
		if _, _, err := prod.SendMessage(&sarama.ProducerMessage{Topic: topic, Value: sarama.StringEncoder(fmt.Sprint(i))}); err != nil {
			t.Fatal(err)
		}
	}
	prod.Close()

	cfg := consumergroup.NewConfig()
	cfg.Offsets.Initial = sarama.OffsetOldest
	cfg.Offsets.CommitInterval = 100 * time.Millisecond
	cfg.Offsets.ProcessingTimeout = 2 * time.Second
	reg := metrics.NewRegistry()
	cfg.MetricRegistry = reg
	cg, err := consumergroup.JoinConsumerGroup(testenv.UniqueName("prom-g"), []string{topic}, []string{testenv.ZKAddr()}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	got := 0
	deadline := time.After(30 * time.Second)
	for got < 100 {
		select {
		case m := <-cg.Messages():
			_ = cg.CommitUpto(m)
			got++
		case err := <-cg.Errors():
			t.Logf("error: %v", err)
		case <-deadline:
			t.Fatalf("only %d of 100 messages", got)
		}
	}
	var text string
	for start := time.Now(); time.Since(start) < 10*time.Second; time.Sleep(100 * time.Millisecond) {
		text = scrape(t, reg)
		if strings.Contains(text, `kafka_zkgroup_lag{partition="0",topic="`+topic+`"} 0`) &&
			strings.Contains(text, `kafka_zkgroup_lag{partition="1",topic="`+topic+`"} 0`) {
			break
		}
	}
	for _, want := range []string{
		"kafka_zkgroup_claims 2",
		"kafka_zkgroup_partitions_owned 2",
		"kafka_zkgroup_rebalances 1",
		"kafka_zkgroup_offset_conflicts 0",
		"kafka_zkgroup_fence_pauses 0",
		"kafka_zkgroup_claim_wait_ms_count 2",
		"kafka_zkgroup_rebalance_ms_count 1",
		"kafka_zkgroup_commit_latency_ms_count",
		"kafka_zkgroup_commits",
		`kafka_zkgroup_lag{partition="0",topic="` + topic + `"} 0`,
		"kafka_incoming_byte_rate", // sarama's own, from the same registry
	} {
		if !strings.Contains(text, want) {
			t.Errorf("scrape lacks %q", want)
		}
	}
	if t.Failed() {
		t.Logf("scrape:\n%s", text)
	}
	if err := cg.Close(); err != nil {
		t.Errorf("close: %v", err)
	}
}
