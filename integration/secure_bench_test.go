package integration

import (
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/zkgroup/kafka/consumergroup"
	"github.com/zkgroup/kafka/internal/testenv"
)

// BenchmarkIntegrationSecureThroughput measures, in one run on the secure
// stack, what TLS and SCRAM cost the group: reading a 4-partition topic of
// N messages (ZKGROUP_BENCH_MESSAGES, default 100000) from start to end
// with CommitUpto on every message,
//
//   - plaintext: ZooKeeper's plain port, Kafka's PLAINTEXT listener;
//   - tls-scram: ZooKeeper over TLS with digest credentials and the
//     recommended ACL, Kafka over SASL_SSL with SCRAM-SHA-512.
//
// Each iteration joins a new group (register, claim), reads, and closes
// (final commit, release); msgs/s-to-last leaves the close out. Run:
//
//	integration/secure-tests.sh -run NONE   (or, on a running secure stack:)
//	go test -run=NONE -bench=IntegrationSecureThroughput -benchtime=2x ./integration/
func BenchmarkIntegrationSecureThroughput(b *testing.B) {
	s := secureEnv(b)
	n := 100_000
	if v, err := strconv.Atoi(os.Getenv("ZKGROUP_BENCH_MESSAGES")); err == nil && v > 0 {
		n = v
	}
	topic := newTopic(b, 4)
	produce(b, topic, n)

	run := func(b *testing.B, zkAddr string, config func(group string) *consumergroup.Config) {
		var closing time.Duration
		b.ResetTimer()
		start := time.Now()
		for i := 0; i < b.N; i++ {
			group := testenv.UniqueName("bench")
			cg := joinVia(b, zkAddr, group, []string{topic}, config(group))
			for got := 0; got < n; got++ {
				_ = cg.CommitUpto(<-cg.Messages())
			}
			t1 := time.Now()
			if err := cg.Close(); err != nil {
				b.Fatal(err)
			}
			closing += time.Since(t1)
		}
		all := time.Since(start)
		b.ReportMetric(float64(n*b.N)/all.Seconds(), "msgs/s")
		b.ReportMetric(float64(n*b.N)/(all-closing).Seconds(), "msgs/s-to-last")
	}
	b.Run("plaintext", func(b *testing.B) {
		run(b, testenv.ZKAddr(), func(string) *consumergroup.Config { return testConfig() })
	})
	b.Run("tls-scram", func(b *testing.B) {
		run(b, s.zkTLS, func(group string) *consumergroup.Config { return s.groupConfig(b, group, randomPassword()) })
	})
}
