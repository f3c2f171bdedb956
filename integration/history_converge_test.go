package integration

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/zkgroup/kafka/consumergroup"
)

// Convergence: after the last fault, every partition must end up owned by the
// right live instance, and stay so, within exp.within.
//
// The fault that counts is the one that ended last; a fault the test never
// ended counts as an instant at its start. Without faults the clock starts at
// the history's origin. The group converged at the first ownership snapshot,
// taken at or after that moment, from which every later snapshot satisfies
// the expectation (see converged); the last snapshot must satisfy it.

// lastFault returns the name and end of the fault that ended last, or "the
// start" and origin when there was none.
func lastFault(d *historyData) (string, time.Time) {
	name, end := "the start", d.origin
	for _, f := range d.faults {
		if e := f.until(); !e.Before(end) {
			name, end = f.name, f.until()
		}
	}
	return name, end
}

func checkConvergence(r *historyReport, d *historyData, exp expectation) {
	if exp.within <= 0 {
		return
	}
	r.convergeChecked = true
	r.lastFault, r.lastFaultEnd = lastFault(d)
	var after []ownerSnapshot
	for _, s := range d.snapshots {
		if !s.at.Before(r.lastFaultEnd) {
			after = append(after, s)
		}
	}
	if len(after) == 0 {
		r.convergeWhy = "no ownership snapshot after it"
		r.violate(invConvergence, "no ownership snapshot after %s (ended %s)", r.lastFault, r.rel(r.lastFaultEnd))
		return
	}
	i := len(after)
	for i > 0 {
		ok, why := converged(after[i-1], d, exp)
		if !ok {
			if i == len(after) {
				r.convergeWhy = why
			}
			break
		}
		i--
	}
	if i == len(after) {
		r.violate(invConvergence, "not converged at the last snapshot (%s, %v after %s): %s",
			r.rel(after[i-1].at), after[i-1].at.Sub(r.lastFaultEnd).Round(time.Millisecond), r.lastFault, r.convergeWhy)
		return
	}
	r.converged = true
	r.convergedAfter = after[i].at.Sub(r.lastFaultEnd)
	if r.convergedAfter > exp.within {
		r.violate(invConvergence, "converged %v after %s, more than the bound %v", r.convergedAfter.Round(time.Millisecond), r.lastFault, exp.within)
	}
}

// converged reports whether snapshot s satisfies exp: the registered
// instances are exactly the live ones (exp.live, or exp.liveCount of them),
// every partition is owned by a registered instance, and the owners are
// exp.want, the default assignment of the registered ids (exp.assigned), or
// balanced.
func converged(s ownerSnapshot, d *historyData, exp expectation) (bool, string) {
	if s.err != nil {
		return false, fmt.Sprintf("read failed: %v", s.err)
	}
	ids := slices.Sorted(slices.Values(s.ids))
	switch {
	case exp.live != nil && !slices.Equal(ids, slices.Sorted(slices.Values(exp.live))):
		return false, fmt.Sprintf("registered %v, want the live %v", ids, slices.Sorted(slices.Values(exp.live)))
	case exp.live == nil && exp.liveCount > 0 && len(ids) != exp.liveCount:
		return false, fmt.Sprintf("%d registered (%v), want %d", len(ids), ids, exp.liveCount)
	case len(ids) == 0:
		return false, "no instance registered"
	}
	want := exp.want
	if want == nil && exp.assigned {
		var err error
		if want, err = defaultAssignment(ids, d); err != nil {
			return false, err.Error()
		}
	}
	count := make(map[string]int)
	for _, id := range ids {
		count[id] = 0
	}
	var problems []string
	for p := int32(0); p < d.partitions; p++ {
		owner, ok := s.owners[p]
		_, registered := count[owner]
		switch {
		case !ok:
			problems = append(problems, fmt.Sprintf("%d unowned", p))
		case !registered:
			problems = append(problems, fmt.Sprintf("%d owned by %s, not registered", p, owner))
		case want != nil && owner != want[p]:
			problems = append(problems, fmt.Sprintf("%d owned by %s, want %s", p, owner, want[p]))
		}
		if registered {
			count[owner]++
		}
	}
	if len(problems) > 0 {
		return false, fmt.Sprintf("%d/%d partitions: %s", len(problems), d.partitions, strings.Join(firstN(problems, 5), "; "))
	}
	if want == nil {
		lo, hi := slices.Min(slices.Collect(maps.Values(count))), slices.Max(slices.Collect(maps.Values(count)))
		if hi-lo > 1 {
			return false, fmt.Sprintf("unbalanced: partitions per instance %v", count)
		}
	}
	return true, ""
}

// defaultAssignment is the owner of each partition that the group's default
// strategy computes for ids, with the leaders of d (unknown: -1).
func defaultAssignment(ids []string, d *historyData) (map[int32]string, error) {
	var infos []consumergroup.PartitionInfo
	for p := int32(0); p < d.partitions; p++ {
		leader, ok := d.leaders[p]
		if !ok {
			leader = -1
		}
		infos = append(infos, consumergroup.PartitionInfo{ID: p, Leader: leader})
	}
	assigned, err := consumergroup.AssignTopic(consumergroup.DefaultAssignmentStrategy, d.topic, ids, infos)
	if err != nil {
		return nil, err
	}
	want := make(map[int32]string)
	for id, ps := range assigned {
		for _, p := range ps {
			want[p.ID] = id
		}
	}
	return want, nil
}
