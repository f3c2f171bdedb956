package assign

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// BenchmarkMovement measures, at 1,024 partitions and 32 instances,
// partitions moved when a 33rd instance joins and when one of the 32
// leaves, and the fewest and most partitions per instance after each,
// averaged over 100 draws of kazoo-go-like instance IDs; the figures in
// docs/assignment.md come from it. The time per op is that of the 100
// draws, three assignments each.
func BenchmarkMovement(b *testing.B) {
	const nParts, nInst, draws = 1024, 32, 100
	parts := partitionRange(nParts)
	strategies := map[string]func(inst []string) map[string][]Partition{
		"sticky": func(inst []string) map[string][]Partition { return Rendezvous("orders", inst, parts) },
		"range":  func(inst []string) map[string][]Partition { a, _ := Assign(RangeByID, inst, parts); return a },
	}
	for _, name := range []string{"sticky", "range"} {
		assign := strategies[name]
		b.Run(name, func(b *testing.B) {
			var joinMoved, leaveMoved, joinMin, joinMax, leaveMin, leaveMax float64
			for i := 0; i < b.N; i++ {
				joinMoved, leaveMoved, joinMin, joinMax, leaveMin, leaveMax = 0, 0, 0, 0, 0, 0
				r := rand.New(rand.NewPCG(1, 2))
				for range draws {
					inst := members(r, nInst+1)
					base := assign(inst[:nInst])
					joined := assign(inst)
					moved, _ := movement(base, joined, "", "")
					joinMoved += float64(moved)
					lo, hi := spread(joined)
					joinMin, joinMax = joinMin+float64(lo), joinMax+float64(hi)

					leaver := inst[r.IntN(nInst)]
					left := assign(slices.DeleteFunc(slices.Clone(inst[:nInst]), func(s string) bool { return s == leaver }))
					moved, _ = movement(base, left, "", "")
					leaveMoved += float64(moved)
					lo, hi = spread(left)
					leaveMin, leaveMax = leaveMin+float64(lo), leaveMax+float64(hi)
				}
			}
			b.ReportMetric(joinMoved/draws, "moved/join")
			b.ReportMetric(joinMin/draws, "min-after-join")
			b.ReportMetric(joinMax/draws, "max-after-join")
			b.ReportMetric(leaveMoved/draws, "moved/leave")
			b.ReportMetric(leaveMin/draws, "min-after-leave")
			b.ReportMetric(leaveMax/draws, "max-after-leave")
		})
	}
}

// spread is the fewest and the most partitions an instance got.
func spread(a map[string][]Partition) (lo, hi int) {
	lo = -1
	for _, ps := range a {
		if lo < 0 || len(ps) < lo {
			lo = len(ps)
		}
		hi = max(hi, len(ps))
	}
	return lo, hi
}

// BenchmarkRendezvous is the time one instance takes to compute a topic of
// 1,024 partitions over 32 instances.
func BenchmarkRendezvous(b *testing.B) {
	inst := members(rand.New(rand.NewPCG(1, 2)), 32)
	parts := partitionRange(1024)
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		Rendezvous("orders", inst, parts)
	}
}
