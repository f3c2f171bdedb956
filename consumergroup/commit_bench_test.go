package consumergroup

import (
	"fmt"
	"log/slog"
	"sync"
	"testing"

	"github.com/zkgroup/kafka/internal/testenv"
	"github.com/zkgroup/kafka/kazoo"
)

// BenchmarkIntegrationCommitDirtyPartitions: one commit round of an
// instance owning 1,024 partitions, every one of them dirty, fenced by its
// claim, on the real ZooKeeper. "sequential" commits one partition after
// another (concurrency 1, as before commits were pipelined); "pipelined"
// is the default. Reported: ms per round.
//
//	go test -run=NONE -bench=IntegrationCommitDirtyPartitions -benchtime=5x ./consumergroup/
func BenchmarkIntegrationCommitDirtyPartitions(b *testing.B) {
	testenv.Integration(b)
	const partitions = 1024
	kz, err := kazoo.NewKazooFromConnectionString(testenv.ZKAddr(), nil)
	if err != nil {
		b.Fatal(err)
	}
	defer kz.Close()
	group := kz.Consumergroup(testenv.UniqueName("bench-commit"))
	inst := group.Instance("b")
	cg := &ConsumerGroup{kazoo: kz, group: group, instance: inst, log: slog.New(slog.DiscardHandler), errors: make(chan error, 1)}

	claims := make([]*kazoo.PartitionClaim, partitions)
	var wg sync.WaitGroup
	sem := make(chan struct{}, 64)
	for p := range claims {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			c, err := inst.Claim("t", int32(p))
			if err != nil {
				b.Error(err)
				return
			}
			claims[p] = c
		}()
	}
	wg.Wait()
	if b.Failed() {
		return
	}

	for _, mode := range []struct {
		name        string
		concurrency int
	}{{"sequential", 1}, {"pipelined", 0}} {
		b.Run(mode.name, func(b *testing.B) {
			om := &zookeeperOffsetManager{cg: cg, parts: make(map[topicPartition]*ownedOffsets), concurrency: mode.concurrency}
			var owned []*ownedOffsets
			for p, c := range claims {
				next, version, err := group.FetchOffsetVersion("t", int32(p))
				if err != nil {
					b.Fatal(err)
				}
				owned = append(owned, om.adopt(topicPartition{"t", int32(p)}, c, next, version, nil))
			}
			next := int64(1_000_000)
			b.ResetTimer()
			for range b.N {
				b.StopTimer()
				next++
				for _, o := range owned {
					o.tracker.Reset(next - 1)
					o.tracker.MarkOffset(next - 1)
				}
				b.StartTimer()
				if errs := om.commitEach(); len(errs) > 0 {
					b.Fatal(fmt.Errorf("%d commits failed, first: %w", len(errs), errs[0]))
				}
			}
			b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N), "ms/round")
		})
	}
}
