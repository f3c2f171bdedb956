package main

import (
	"io"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	metrics "github.com/rcrowley/go-metrics"
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
	metrics.GetOrRegisterCounter("zkgroup-commits", reg).Inc(7)
	metrics.GetOrRegisterGauge("zkgroup-partitions-owned", reg).Update(4)
	metrics.GetOrRegisterGauge("zkgroup-lag-my.topic-3", reg).Update(12)
	h := metrics.GetOrRegisterHistogram("zkgroup-commit-latency-ms", reg, metrics.NewUniformSample(100))
	h.Update(5)
	h.Update(15)
	text := scrape(t, reg)
	for _, want := range []string{
		"kafka_zkgroup_commits 7",
		"kafka_zkgroup_partitions_owned 4",
		`kafka_zkgroup_lag{partition="3",topic="my.topic"} 12`,
		"kafka_zkgroup_commit_latency_ms_count 2",
		"kafka_zkgroup_commit_latency_ms_sum 20",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("scrape lacks %q:\n%s", want, text)
		}
	}
}
