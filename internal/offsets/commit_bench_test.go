package offsets

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
//	go test -run=NONE -bench=IntegrationCommitDirtyPartitions -benchtime=5x ./internal/offsets/
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
	reg := KazooRegistry(group, func() *kazoo.ConsumergroupInstance { return inst })

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
			om := New(Config{Concurrency: mode.concurrency}, Deps{Log: slog.New(slog.DiscardHandler), Registry: reg})
			var owned []*Partition
			for p, c := range claims {
				next, version, err := group.FetchOffsetVersion("t", int32(p))
				if err != nil {
					b.Fatal(err)
				}
				owned = append(owned, om.adopt(TopicPartition{"t", int32(p)}, c, next, version, nil))
			}
			next := int64(1_000_000)
			b.ResetTimer()
			for range b.N {
				b.StopTimer()
				next++
				for _, o := range owned {
					o.Tracker.Reset(next - 1)
					o.Tracker.MarkOffset(next - 1)
				}
				b.StartTimer()
				if errs := om.CommitEach(); len(errs) > 0 {
					b.Fatal(fmt.Errorf("%d commits failed, first: %w", len(errs), errs[0]))
				}
			}
			b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N), "ms/round")
		})
	}
}
