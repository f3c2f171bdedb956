package fetch

import (
	"fmt"
	"time"

	metrics "github.com/rcrowley/go-metrics"
)

// countRound counts a round over an own connection in the meters sarama's
// Broker would have counted it in, had it sent it (all brokers', and the
// broker's own, "-for-broker-<id>"): requests, responses, their bytes and
// latency, fetches, and the per-topic fetch rate. See docs/metrics.md.
func (c *ownFetchConn) countRound(sent, received int, latency time.Duration, batch []*fetchWant) {
	r := c.conf.MetricRegistry
	if r == nil {
		return
	}
	histogram := func(name string) metrics.Histogram {
		return metrics.GetOrRegisterHistogram(name, r, metrics.NewExpDecaySample(1028, 0.015)) // sarama's sample
	}
	for _, suffix := range []string{"", fmt.Sprintf("-for-broker-%d", c.broker.ID())} {
		metrics.GetOrRegisterMeter("request-rate"+suffix, r).Mark(1)
		metrics.GetOrRegisterMeter("outgoing-byte-rate"+suffix, r).Mark(int64(sent))
		histogram("request-size" + suffix).Update(int64(sent))
		metrics.GetOrRegisterMeter("protocol-requests-rate-1"+suffix, r).Mark(1)
		metrics.GetOrRegisterMeter("consumer-fetch-rate"+suffix, r).Mark(1)
		if received > 0 {
			histogram("request-latency-in-ms" + suffix).Update(int64(latency / time.Millisecond))
			metrics.GetOrRegisterMeter("response-rate"+suffix, r).Mark(1)
			metrics.GetOrRegisterMeter("incoming-byte-rate"+suffix, r).Mark(int64(received))
			histogram("response-size" + suffix).Update(int64(received))
		}
	}
	for _, wants := range groupByTopic(batch) {
		metrics.GetOrRegisterMeter("consumer-fetch-rate-for-topic-"+wants[0].topic, r).Mark(1)
	}
}
