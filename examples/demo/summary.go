package main

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"time"
)

// cutWindow says which member was cut off from ZooKeeper, and when (on the
// demo clock). restored is 0 while the member is still cut off; member is 0
// when nobody was cut.
type cutWindow struct {
	member        int
	cut, restored time.Duration
}

// end is when the member came back (the end of time if it never did).
func (w cutWindow) end() time.Duration {
	if w.restored == 0 {
		return time.Duration(1<<63 - 1)
	}
	return w.restored
}

// cutOff reports whether first, a delivery by the member that was cut off,
// made before it came back, was followed by again after the cut: again
// then replaced what the cut-off member could not commit.
func (w cutWindow) cutOff(first, again delivery) bool {
	return w.member != 0 && first.member == w.member && first.at < w.end() && again.at >= w.cut
}

// handoff is a partition changing deliverer: the time between the old
// member's last delivery and the new member's first.
type handoff struct {
	partition int
	from, to  int
	gap       time.Duration
	afterCut  bool // the old member was the one cut off
}

// summary is the demo's verdict, computed from the ledger.
type summary struct {
	partitions int
	produced   int64
	consumed   int64 // distinct messages delivered
	deliveries int64
	lost       int64
	lostAt     []string // "partition/offset" of the first few lost messages
	twice      int64    // deliveries beyond the first of a message
	reasons    map[string]int64
	consumedIn int // partitions with at least one delivery
	handoffs   []handoff

	// interrupted: the run was stopped before the members caught up, so
	// messages not delivered yet are not lost.
	interrupted bool
}

// summarize checks every written message against the deliveries: lost
// (never delivered), delivered twice (and why), and how long each
// partition went without a deliverer when it changed hands.
func summarize(produced []int64, deliveries [][]delivery, w cutWindow) summary {
	s := summary{partitions: len(produced), reasons: make(map[string]int64)}
	for p, n := range produced {
		s.produced += n
		if len(deliveries[p]) > 0 {
			s.consumedIn++
		}
		first := make(map[int64]delivery, n)
		var prev *delivery
		for i := range deliveries[p] {
			d := deliveries[p][i]
			s.deliveries++
			if f, seen := first[d.offset]; seen {
				s.twice++
				s.reasons[reason(f, d, w)]++
			} else {
				first[d.offset] = d
			}
			if prev != nil && prev.member != d.member {
				s.handoffs = append(s.handoffs, handoff{
					partition: p, from: prev.member, to: d.member,
					gap:      max(d.at-prev.at, 0),
					afterCut: w.cutOff(*prev, d),
				})
			}
			prev = &deliveries[p][i]
		}
		s.consumed += int64(len(first))
		for o := range n {
			if _, ok := first[o]; !ok {
				s.lost++
				if len(s.lostAt) < 10 {
					s.lostAt = append(s.lostAt, fmt.Sprintf("%d/%d", p, o))
				}
			}
		}
	}
	return s
}

// reason explains why a message was delivered again (again) after its
// first delivery (first).
func reason(first, again delivery, w cutWindow) string {
	switch {
	case w.cutOff(first, again):
		return fmt.Sprintf("member %d cut off: delivered but not committed before the fence", w.member)
	case first.member != again.member:
		return fmt.Sprintf("moved from member %d to member %d: delivered but not committed before the move", first.member, again.member)
	default:
		return fmt.Sprintf("member %d delivered it again after losing and regaining the partition", first.member)
	}
}

// worst returns the longest handoff among those for which keep is true.
func (s summary) worst(keep func(handoff) bool) (h handoff, n int) {
	for _, x := range s.handoffs {
		if keep(x) {
			n++
			if x.gap >= h.gap {
				h = x
			}
		}
	}
	return h, n
}

// ok reports whether the run proved what it should: nothing lost and every
// partition consumed.
func (s summary) ok() bool { return s.lost == 0 && s.consumedIn == s.partitions }

// print writes the summary for people, then one line of key=value pairs
// for scripts.
func (s summary) print(out io.Writer, w cutWindow) {
	fmt.Fprintln(out, "\nsummary")
	fmt.Fprintf(out, "  produced         %d messages to %d partitions\n", s.produced, s.partitions)
	fmt.Fprintf(out, "  consumed         %d distinct messages (%d deliveries), %d of %d partitions\n",
		s.consumed, s.deliveries, s.consumedIn, s.partitions)
	switch {
	case s.lost == 0:
		fmt.Fprintln(out, "  lost             0")
	case s.interrupted:
		fmt.Fprintf(out, "  not delivered    %d: interrupted before the members caught up (still in Kafka, not lost)\n", s.lost)
	default:
		fmt.Fprintf(out, "  lost             %d (partition/offset: %s ...)\n", s.lost, strings.Join(s.lostAt, " "))
	}
	fmt.Fprintf(out, "  delivered twice  %d\n", s.twice)
	for _, r := range slices.Sorted(maps.Keys(s.reasons)) {
		fmt.Fprintf(out, "      %6d  %s\n", s.reasons[r], r)
	}
	cut, nCut := s.worst(func(h handoff) bool { return h.afterCut })
	clean, nClean := s.worst(func(h handoff) bool { return !h.afterCut })
	if nCut > 0 {
		fmt.Fprintf(out, "  worst handoff    %s: partition %d, member %d -> member %d, after member %d was cut off (%d partitions moved; session timeout and fence decide it)\n",
			round(cut.gap), cut.partition, cut.from, cut.to, w.member, nCut)
	}
	if nClean > 0 {
		fmt.Fprintf(out, "  worst clean handoff %s: partition %d, member %d -> member %d (%d clean handoffs)\n",
			round(clean.gap), clean.partition, clean.from, clean.to, nClean)
	}
	worst, _ := s.worst(func(handoff) bool { return true })
	lost := fmt.Sprintf("lost=%d", s.lost)
	if s.interrupted {
		lost = fmt.Sprintf("interrupted undelivered=%d", s.lost)
	}
	fmt.Fprintf(out, "summary: produced=%d consumed=%d %s twice=%d partitions=%d/%d worst_handoff=%s\n",
		s.produced, s.consumed, lost, s.twice, s.consumedIn, s.partitions, round(worst.gap))
}

func round(d time.Duration) time.Duration { return d.Round(10 * time.Millisecond) }
