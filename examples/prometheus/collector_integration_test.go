package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
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
	group := testenv.UniqueName("prom-g")
	cg, err := consumergroup.JoinConsumerGroup(group, []string{topic}, []string{testenv.ZKAddr()}, cfg)
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
	// Labels come out sorted by name.
	lag := func(p int) string {
		return fmt.Sprintf(`kafka_zkgroup_lag{group="%s",partition="%d",topic="%s"}`, group, p, topic)
	}
	g := func(metric string) string { return fmt.Sprintf(`kafka_zkgroup_%s{group="%s"}`, metric, group) }
	var text string
	for start := time.Now(); time.Since(start) < 10*time.Second; time.Sleep(100 * time.Millisecond) {
		text = scrape(t, reg)
		if strings.Contains(text, lag(0)+" 0") && strings.Contains(text, lag(1)+" 0") {
			break
		}
	}
	for _, want := range []string{
		g("claims") + " 2",
		g("partitions_owned") + " 2",
		g("rebalances") + " 1",
		g("offset_conflicts") + " 0",
		g("fence_pauses") + " 0",
		g("session_connected") + " 1",
		g("session_fenced") + " 0",
		g("session_expirations") + " 0",
		g("errors_dropped") + " 0",
		g("claim_wait_ms_count") + " 2",
		g("rebalance_ms_count") + " 1",
		g("commit_latency_ms_count"),
		g("commits"),
		lag(0) + " 0",
		lag(1) + " 0",
		"kafka_incoming_byte_rate", // sarama's own, from the same registry
	} {
		if !strings.Contains(text, want) {
			t.Errorf("scrape lacks %q", want)
		}
	}
	if t.Failed() {
		t.Logf("scrape:\n%s", text)
	}
	if code, st := healthz(t, cg); code != http.StatusOK || len(st.Partitions) != 2 || st.Group != group {
		t.Errorf("/healthz while consuming: %d, %+v; want 200 and both partitions", code, st)
	}
	if err := cg.Close(); err != nil {
		t.Errorf("close: %v", err)
	}
	if code, st := healthz(t, cg); code != http.StatusServiceUnavailable || len(st.Partitions) != 0 {
		t.Errorf("/healthz after Close: %d, %+v; want 503 and no partitions", code, st)
	}
}

// healthz gets /healthz of src over HTTP.
func healthz(t *testing.T, src StateSource) (int, consumergroup.GroupState) {
	t.Helper()
	srv := httptest.NewServer(Healthz(src))
	defer srv.Close()
	resp, err := srv.Client().Get(srv.URL + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var st consumergroup.GroupState
	if err := json.NewDecoder(resp.Body).Decode(&st); err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, st
}
