package main

import (
	"io"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	metrics "github.com/rcrowley/go-metrics"

	"github.com/zkgroup/kafka/consumergroup"
)

// scrape serves reg through a Collector and returns the /metrics text.
func scrape(t *testing.T, reg metrics.Registry) string {
	t.Helper()
	promReg := prometheus.NewRegistry()
	promReg.MustRegister(NewCollector("kafka", reg))
	srv := httptest.NewServer(promhttp.HandlerFor(promReg, promhttp.HandlerOpts{}))
	defer srv.Close()
	resp, err := srv.Client().Get(srv.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(body)
}

func TestCollectorShapes(t *testing.T) {
	reg := metrics.NewRegistry()
	metrics.GetOrRegisterCounter("requests", reg).Inc(7)
	metrics.GetOrRegisterGauge("connections-open", reg).Update(4)
	h := metrics.GetOrRegisterHistogram("request-latency-in-ms", reg, metrics.NewUniformSample(100))
	h.Update(5)
	h.Update(15)
	text := scrape(t, reg)
	for _, want := range []string{
		"kafka_requests 7",
		"kafka_connections_open 4",
		"kafka_request_latency_in_ms_count 2",
		"kafka_request_latency_in_ms_sum 20",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("scrape lacks %q:\n%s", want, text)
		}
	}
}

// Two groups sharing one registry each get their own metrics, told apart
// by the group label, which comes from the metrics themselves. A
// HandlerGroup registers its metrics when it is made, before it connects.
func TestCollectorGroupLabels(t *testing.T) {
	reg := metrics.NewRegistry()
	for _, name := range []string{"orders.v1", "audit-log"} {
		cfg := consumergroup.NewConfig()
		cfg.MetricRegistry = reg
		if _, err := consumergroup.NewConsumerGroup(name, []string{"127.0.0.1:1"}, cfg); err != nil {
			t.Fatal(err)
		}
	}
	text := scrape(t, reg)
	for _, want := range []string{
		`kafka_zkgroup_claims{group="orders.v1"} 0`,
		`kafka_zkgroup_claims{group="audit-log"} 0`,
		`kafka_zkgroup_session_connected{group="orders.v1"} 0`,
		`kafka_zkgroup_errors_dropped{group="audit-log"} 0`,
		`kafka_zkgroup_commit_latency_ms_count{group="orders.v1"} 0`,
	} {
		if !strings.Contains(text, want) {
			t.Errorf("scrape lacks %q:\n%s", want, text)
		}
	}
	if strings.Contains(text, "orders_v1") || strings.Contains(text, "audit_log") {
		t.Errorf("a group's name leaked into a metric's name:\n%s", text)
	}
}
