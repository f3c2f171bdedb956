package integration

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"
)

// invariant names one of the four properties the history checker verifies.
type invariant string

const (
	invLost        invariant = "lost"        // a produced offset was never delivered
	invBackwards   invariant = "backwards"   // a committed offset decreased without a reset
	invOverlap     invariant = "overlap"     // two instances delivered a partition at the same time
	invConvergence invariant = "convergence" // the group did not settle in time after the last fault
)

var invariants = []invariant{invLost, invBackwards, invOverlap, invConvergence}

// partitionOverlap describes the overlapping deliveries of one partition.
type partitionOverlap struct {
	partition  int32
	deliveries int       // deliveries inside the overlap windows
	instances  []int     // the instances whose tenures overlapped
	from, to   time.Time // first and last delivery inside the windows
	samples    []string  // a few of those deliveries
}

// historyReport holds the checker's figures and violations.
type historyReport struct {
	origin     time.Time
	partitions int32

	deliveries  int
	distinct    int
	perInstance map[int]int
	produced    int64 // offsets that had to be delivered
	missing     int

	offsetWrites int // offset node states seen
	missedSets   int // sets seen only through a version gap
	recreated    int // version restarts: the node was deleted and created again
	deletions    int // states where the node was absent after it had existed
	resetsUsed   int // decreases a reset excused
	resetsUnused int // resets after which no decrease was seen

	dups   int            // deliveries of an offset delivered before
	dupsBy map[string]int // by reason (see dupReason)

	handoffs          int           // new tenures after a previous one
	worstGap          time.Duration // longest time between the end of one tenure and the next
	worstGapAt        string
	unexplainedStarts []string // tenures that began at an offset no commit explains

	overlaps          []partitionOverlap
	overlapDeliveries int

	lastFault       string
	lastFaultEnd    time.Time
	convergeChecked bool
	converged       bool
	convergedAfter  time.Duration // from lastFaultEnd (or the origin) to the stable converged state
	convergeWhy     string        // why the last snapshot was not converged

	violations map[invariant][]string
}

func newHistoryReport(d *historyData) *historyReport {
	return &historyReport{
		origin: d.origin, partitions: d.partitions,
		perInstance: make(map[int]int), dupsBy: make(map[string]int),
		violations: make(map[invariant][]string),
	}
}

// rel prints t relative to the history's origin.
func (r *historyReport) rel(t time.Time) string {
	if t.IsZero() {
		return "never"
	}
	return fmt.Sprintf("+%v", t.Sub(r.origin).Round(time.Millisecond))
}

func (r *historyReport) violate(inv invariant, format string, args ...any) {
	r.violations[inv] = append(r.violations[inv], fmt.Sprintf(format, args...))
}

// failed reports whether inv was violated.
func (r *historyReport) failed(inv invariant) bool { return len(r.violations[inv]) > 0 }

// clean reports whether no invariant was violated.
func (r *historyReport) clean() bool {
	for _, inv := range invariants {
		if r.failed(inv) {
			return false
		}
	}
	return true
}

// maxListed bounds the violations of one invariant that log and assertClean print.
const maxListed = 20

// log writes the figures and every violation (a bounded number of each kind).
func (r *historyReport) log(t testing.TB) {
	t.Helper()
	insts := slices.Sorted(maps.Keys(r.perInstance))
	var per []string
	for _, i := range insts {
		per = append(per, fmt.Sprintf("%d:%d", i, r.perInstance[i]))
	}
	t.Logf("history: %d partitions; %d deliveries (%d distinct; per instance %s); %d offsets to deliver, %d missing",
		r.partitions, r.deliveries, r.distinct, strings.Join(per, " "), r.produced, r.missing)
	reasons := slices.Sorted(maps.Keys(r.dupsBy))
	var by []string
	for _, k := range reasons {
		by = append(by, fmt.Sprintf("%s %d", k, r.dupsBy[k]))
	}
	t.Logf("history: duplicates %d (%s); handoffs %d, worst gap %v %s; tenures with unexplained start %d",
		r.dups, strings.Join(by, ", "), r.handoffs, r.worstGap.Round(time.Millisecond), r.worstGapAt, len(r.unexplainedStarts))
	t.Logf("history: offset states seen %d (sets missed %d, re-created %d, deleted %d); decreases excused by a reset %d, resets unused %d",
		r.offsetWrites, r.missedSets, r.recreated, r.deletions, r.resetsUsed, r.resetsUnused)
	for _, o := range r.overlaps {
		t.Logf("history: partition %d: %d overlapping deliveries by instances %v from %s to %s (%v); e.g. %s",
			o.partition, o.deliveries, o.instances, r.rel(o.from), r.rel(o.to), o.to.Sub(o.from).Round(time.Millisecond),
			strings.Join(o.samples, "; "))
	}
	switch {
	case !r.convergeChecked:
		t.Logf("history: convergence not checked")
	case r.converged:
		t.Logf("history: converged %v after %s (ended %s)", r.convergedAfter.Round(time.Millisecond), r.lastFault, r.rel(r.lastFaultEnd))
	default:
		t.Logf("history: not converged after %s (ended %s): %s", r.lastFault, r.rel(r.lastFaultEnd), r.convergeWhy)
	}
	for _, s := range firstN(r.unexplainedStarts, 5) {
		t.Logf("history: unexplained tenure start: %s", s)
	}
	for _, inv := range invariants {
		for _, v := range firstN(r.violations[inv], maxListed) {
			t.Logf("history: VIOLATION %s: %s", inv, v)
		}
	}
}

// assertClean fails t for every violation (a bounded number of each kind).
func (r *historyReport) assertClean(t testing.TB) {
	t.Helper()
	for _, inv := range invariants {
		for _, v := range firstN(r.violations[inv], maxListed) {
			t.Errorf("history: %s: %s", inv, v)
		}
	}
}

// firstN returns at most n items, the last one saying how many were left out.
func firstN(items []string, n int) []string {
	if len(items) <= n {
		return items
	}
	return append(slices.Clone(items[:n]), fmt.Sprintf("... %d more", len(items)-n))
}
