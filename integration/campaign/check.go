package campaign

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"time"
)

// Bounds are the limits Check holds a history to.
type Bounds struct {
	// Orphan is the longest a partition may stay without an owner node.
	Orphan time.Duration
	// Rewind is the most offsets a new claim may deliver again of what
	// earlier claims of its partition delivered (the uncommitted window);
	// RewindBound computes it.
	Rewind int64
	// Window is how long a claim may deliver without committing (the
	// commit interval plus the fence's budget): a claim catching up a
	// backlog delivers more than Rewind in it. A handoff delivering again
	// more than Rewind offsets is a rewind only if earlier claims
	// delivered them over more than Window. Zero: judged by Rewind alone.
	Window time.Duration
}

// RewindBound is the uncommitted window of a partition consumed at rate
// messages a second: what is delivered in a commit interval plus what can be
// delivered while commits fail before the fence pauses delivery (budget),
// plus slack messages in flight.
func RewindBound(rate float64, commitInterval, budget time.Duration, slack int64) int64 {
	return int64(math.Ceil(rate*(commitInterval+budget).Seconds())) + slack
}

// Anomaly is one instance of a class.
type Anomaly struct {
	Class     Class
	Partition int32
	Offset    int64
	At        time.Time
	Detail    string
}

func (a Anomaly) String() string {
	return fmt.Sprintf("%s p%d o%d: %s", a.Class, a.Partition, a.Offset, a.Detail)
}

// Report is what Check found.
type Report struct {
	// Anomalies are listed by class.
	Anomalies map[Class][]Anomaly
	// DuplicatesBy counts the duplicates by the kind of the fault that
	// caused them ("none": no fault near).
	DuplicatesBy map[Kind]int
	// LongestOrphan is the longest time a partition had no owner node
	// (OrphanPartition), after its first claim.
	LongestOrphan   time.Duration
	OrphanPartition int32
	// Acked and Delivered count what the producer and the members did.
	Acked, Delivered int
}

// Count returns how many anomalies of c were found.
func (r *Report) Count(c Class) int { return len(r.Anomalies[c]) }

// Failed reports whether any anomaly of a class not tolerated was found.
func (r *Report) Failed() bool {
	for c, as := range r.Anomalies {
		if len(as) > 0 && !c.Tolerated() {
			return true
		}
	}
	return false
}

func (r *Report) add(c Class, p int32, o int64, at time.Time, format string, args ...any) {
	r.Anomalies[c] = append(r.Anomalies[c], Anomaly{Class: c, Partition: p, Offset: o, At: at, Detail: fmt.Sprintf(format, args...)})
}

// Check looks for every class of anomaly in h. It does not modify h.
func Check(h *History, b Bounds) *Report {
	r := &Report{Anomalies: make(map[Class][]Anomaly), DuplicatesBy: make(map[Kind]int), Acked: len(h.Acked), Delivered: len(h.Deliveries)}
	ix := index(h)
	checkReads(h, ix, r)
	checkDuplicates(h, ix, r, b)
	checkPolls(h, ix, r)
	checkSplitBrain(ix, r)
	checkCommits(h, ix, r)
	checkOrphans(h, r, b)
	checkHandoffs(h, ix, r, b)
	return r
}

type offsetKey struct {
	p int32
	o int64
}

// claimKey names one claim: a reader's deliveries under one epoch.
type claimKey struct {
	p      int32
	reader string
	epoch  int64
}

type claimSpan struct {
	claimKey
	first, last       Delivery
	firstIdx, lastIdx int
}

// historyIndex is h's deliveries in time order and what the checks look up.
type historyIndex struct {
	deliveries []Delivery // by time, stable
	reads      map[offsetKey][]Delivery
	known      map[offsetKey]bool // acknowledged or read by anyone
	maxRead    map[int32]int64
	claims     map[int32][]*claimSpan // by epoch
}

func index(h *History) *historyIndex {
	ix := &historyIndex{reads: make(map[offsetKey][]Delivery), known: make(map[offsetKey]bool), maxRead: make(map[int32]int64), claims: make(map[int32][]*claimSpan)}
	ix.deliveries = slices.Clone(h.Deliveries)
	slices.SortStableFunc(ix.deliveries, func(a, b Delivery) int { return a.At.Compare(b.At) })
	for _, a := range h.Acked {
		ix.known[offsetKey{a.Partition, a.Offset}] = true
	}
	spans := make(map[claimKey]*claimSpan)
	for i, d := range ix.deliveries {
		k := offsetKey{d.Partition, d.Offset}
		ix.reads[k] = append(ix.reads[k], d)
		ix.known[k] = true
		if m, ok := ix.maxRead[d.Partition]; !ok || d.Offset > m {
			ix.maxRead[d.Partition] = d.Offset
		}
		if d.Epoch < 0 {
			continue
		}
		ck := claimKey{d.Partition, d.Reader, d.Epoch}
		s := spans[ck]
		if s == nil {
			s = &claimSpan{claimKey: ck, first: d, firstIdx: i}
			spans[ck] = s
			ix.claims[d.Partition] = append(ix.claims[d.Partition], s)
		}
		s.last, s.lastIdx = d, i
	}
	for _, cs := range ix.claims {
		slices.SortStableFunc(cs, func(a, b *claimSpan) int { return cmp.Compare(a.epoch, b.epoch) })
	}
	return ix
}

// checkReads: lost writes, unseen writes, inconsistent offsets.
func checkReads(h *History, ix *historyIndex, r *Report) {
	values := make(map[offsetKey]string)
	inconsistent := make(map[offsetKey]bool)
	note := func(k offsetKey, v string, at time.Time, who string) {
		if prev, ok := values[k]; ok && prev != v && !inconsistent[k] {
			inconsistent[k] = true
			r.add(InconsistentOffsets, k.p, k.o, at, "%s %q, earlier %q", who, v, prev)
		} else if !ok {
			values[k] = v
		}
	}
	for _, a := range h.Acked {
		k := offsetKey{a.Partition, a.Offset}
		note(k, a.Value, a.At, "acknowledged")
		if len(ix.reads[k]) > 0 {
			continue
		}
		if m, ok := ix.maxRead[a.Partition]; ok && m > a.Offset {
			r.add(LostWrite, a.Partition, a.Offset, a.At, "acknowledged, never read; offset %d was", m)
		} else {
			r.add(Unseen, a.Partition, a.Offset, a.At, "acknowledged, never read")
		}
	}
	for _, d := range ix.deliveries {
		note(offsetKey{d.Partition, d.Offset}, d.Value, d.At, "read by "+d.Reader)
	}
}

// checkDuplicates counts every delivery of an offset after its first, and
// blames a reset of its partition between the two if there was one, else
// the last fault that started before it and had not ended Bounds.Orphan
// before the first delivery.
func checkDuplicates(h *History, ix *historyIndex, r *Report, b Bounds) {
	for k, ds := range ix.reads {
		for _, d := range ds[1:] {
			r.add(Duplicate, k.p, k.o, d.At, "read by %s, first by %s", d.Reader, ds[0].Reader)
			if resetBetween(h.Resets, k.p, ds[0].At, d.At) {
				r.DuplicatesBy[ResetOffsets]++
				continue
			}
			r.DuplicatesBy[blame(h.Faults, ds[0].At.Add(-b.Orphan), d.At)]++
		}
	}
}

func blame(faults []Fault, after, before time.Time) Kind {
	kind, start := Kind("none"), time.Time{}
	for _, f := range faults {
		end := f.End
		if end.Before(f.Start) {
			end = f.Start
		}
		if !f.Start.After(before) && !end.Before(after) && f.Start.After(start) {
			kind, start = f.Kind, f.Start
		}
	}
	return kind
}

// checkPolls: within one reader's deliveries of one partition under one
// claim, each offset is the next one that exists, unless a reset of the
// partition came between.
func checkPolls(h *History, ix *historyIndex, r *Report) {
	type readerKey struct {
		reader string
		p      int32
	}
	prev := make(map[readerKey]Delivery)
	for _, d := range ix.deliveries {
		rk := readerKey{d.Reader, d.Partition}
		last, ok := prev[rk]
		prev[rk] = d
		if !ok || (d.Epoch >= 0 && last.Epoch >= 0 && d.Epoch != last.Epoch) || resetBetween(h.Resets, d.Partition, last.At, d.At) {
			continue
		}
		if d.Offset <= last.Offset {
			r.add(NonmonotonicPoll, d.Partition, d.Offset, d.At, "%s read %d after %d under epoch %d", d.Reader, d.Offset, last.Offset, d.Epoch)
			continue
		}
		for o := last.Offset + 1; o < d.Offset; o++ {
			if ix.known[offsetKey{d.Partition, o}] {
				r.add(PollSkip, d.Partition, o, d.At, "%s read %d after %d under epoch %d", d.Reader, d.Offset, last.Offset, d.Epoch)
				break
			}
		}
	}
}

// resetBetween reports whether a reset of p was under way at some time
// from from to to.
func resetBetween(resets []Reset, p int32, from, to time.Time) bool {
	for _, rs := range resets {
		end := rs.End
		if end.Before(rs.At) {
			end = rs.At
		}
		if (rs.Partition == p || rs.Partition < 0) && !end.Before(from) && !rs.At.After(to) {
			return true
		}
	}
	return false
}

// checkSplitBrain: a claim delivering after a later claim of the same
// partition started delivering.
func checkSplitBrain(ix *historyIndex, r *Report) {
	for p, cs := range ix.claims {
		for i, a := range cs {
			for _, b := range cs[i+1:] {
				if a.lastIdx > b.firstIdx && (a.epoch < b.epoch || a.reader != b.reader) {
					late := 0
					for _, d := range ix.deliveries[b.firstIdx+1 : a.lastIdx+1] {
						if d.Partition == p && d.Reader == a.reader && d.Epoch == a.epoch {
							late++
						}
					}
					r.add(SplitBrain, p, a.last.Offset, a.last.At, "%s (epoch %d) delivered %d more, the last %d at %s, after %s (epoch %d) delivered %d at %s",
						a.reader, a.epoch, late, a.last.Offset, a.last.At.Format(timeFormat), b.reader, b.epoch, b.first.Offset, b.first.At.Format(timeFormat))
				}
			}
		}
	}
}

const timeFormat = "15:04:05.000"

// checkCommits: regressions, and zombie commits: a state of the offset
// node written (by its zxid) after epoch E was set, whose value only
// deliveries under epochs below E account for. A state a reset wrote is
// neither.
func checkCommits(h *History, ix *historyIndex, r *Report) {
	for p, cs := range commitsByPartition(h) {
		var last *Commit // the last state with a value
		for i := range cs {
			c := &cs[i]
			if c.Value < 0 {
				continue
			}
			reset := last != nil && resetBetween(h.Resets, p, last.At, c.At)
			if last != nil && c.Value < last.Value && !reset {
				r.add(CommitRegression, p, c.Value, c.At, "committed %d after %d (version %d -> %d)", c.Value, last.Value, last.Version, c.Version)
			}
			if (last == nil || c.Value != last.Value) && !reset {
				checkZombie(h, ix, r, c)
			}
			last = c
		}
	}
}

func checkZombie(h *History, ix *historyIndex, r *Report, c *Commit) {
	fence := int64(-1)
	for _, e := range h.Epochs {
		if e.Partition == c.Partition && e.Zxid < c.Zxid && e.Epoch > fence {
			fence = e.Epoch
		}
	}
	writer := int64(-1)
	for _, d := range ix.reads[offsetKey{c.Partition, c.Value - 1}] {
		if !d.At.After(c.At) && d.Epoch > writer {
			writer = d.Epoch
		}
	}
	if writer >= 0 && writer < fence {
		r.add(ZombieCommit, c.Partition, c.Value, c.At, "committed %d (zxid %#x), delivered only under epoch %d, after epoch %d", c.Value, c.Zxid, writer, fence)
	}
}

// commitsByPartition returns each partition's commit states in the order
// they were seen.
func commitsByPartition(h *History) map[int32][]Commit {
	out := make(map[int32][]Commit)
	for _, c := range h.Commits {
		out[c.Partition] = append(out[c.Partition], c)
	}
	for _, cs := range out {
		slices.SortStableFunc(cs, func(a, b Commit) int { return a.At.Compare(b.At) })
	}
	return out
}

// checkOrphans measures every time a partition had no owner node, from its
// first claim to the end of the history (what happens after End, the
// members closing, say, is not judged).
func checkOrphans(h *History, r *Report, b Bounds) {
	byPartition := make(map[int32][]Ownership)
	for _, o := range h.Owners {
		byPartition[o.Partition] = append(byPartition[o.Partition], o)
	}
	for p, os := range byPartition {
		slices.SortStableFunc(os, func(a, b Ownership) int { return a.From.Compare(b.From) })
		var covered time.Time // owned until then
		for i, o := range os {
			if o.From.After(h.End) {
				break
			}
			if i > 0 && o.From.After(covered) {
				orphan(r, b, p, covered, o.From)
			}
			if o.To.IsZero() {
				covered = h.End
			} else if o.To.After(covered) {
				covered = o.To
			}
		}
		if covered.Before(h.End) {
			orphan(r, b, p, covered, h.End)
		}
	}
}

func orphan(r *Report, b Bounds, p int32, from, to time.Time) {
	gap := to.Sub(from)
	if gap > r.LongestOrphan {
		r.LongestOrphan, r.OrphanPartition = gap, p
	}
	if gap > b.Orphan {
		r.add(Orphan, p, -1, from, "no owner from %s for %s (bound %s)", from.Format(timeFormat), gap.Round(time.Millisecond), b.Orphan)
	}
}

// checkHandoffs compares each claim's first delivery with the offset
// committed when the claim was made (the last state written before the
// transaction that set its epoch) and with what earlier claims delivered.
func checkHandoffs(h *History, ix *historyIndex, r *Report, b Bounds) {
	commits := commitsByPartition(h)
	for p, cs := range ix.claims {
		for i, c := range cs {
			f := c.first
			if resetBetween(h.Resets, p, f.At.Add(-b.Orphan), f.At) {
				continue
			}
			if committed, ok := committedAtClaim(h, commits[p], c); ok {
				switch {
				case f.Offset < committed:
					r.add(HandoffRewind, p, f.Offset, f.At, "%s (epoch %d) started at %d, below the committed %d", c.reader, c.epoch, f.Offset, committed)
				case f.Offset > committed && anyKnown(ix, p, committed, f.Offset):
					r.add(HandoffSkip, p, f.Offset, f.At, "%s (epoch %d) started at %d, above the committed %d", c.reader, c.epoch, f.Offset, committed)
				}
			}
			if again, delivered, span := rewindOf(ix, cs, i); !rewindAllowed(b, again, span) {
				r.add(HandoffRewind, p, f.Offset, f.At, "%s (epoch %d) started at %d, %d below the %d delivered before, over %s (bounds %d, %s)",
					c.reader, c.epoch, f.Offset, again, delivered, span.Round(time.Millisecond), b.Rewind, b.Window)
			}
		}
	}
}

// rewindOf returns how many offsets the claim cs[i] delivers again of what
// the claims before it had delivered (up to the highest, delivered), and
// how long those claims took to deliver them: from their last delivery of
// the claim's first offset (or the lowest above it they delivered) to that
// of the highest.
func rewindOf(ix *historyIndex, cs []*claimSpan, i int) (again, delivered int64, span time.Duration) {
	c := cs[i]
	f := c.first.Offset
	delivered, low := int64(-1), int64(-1)
	var highAt, lowAt time.Time
	for _, e := range cs[:i] {
		if e.firstIdx > c.firstIdx {
			continue // started after c: not before it
		}
		for _, d := range ix.deliveries[e.firstIdx : min(e.lastIdx, c.firstIdx)+1] {
			if d.Partition != c.p || d.Reader != e.reader || d.Epoch != e.epoch {
				continue
			}
			if d.Offset >= delivered {
				delivered, highAt = d.Offset, d.At
			}
			if d.Offset >= f && (low < 0 || d.Offset <= low) {
				low, lowAt = d.Offset, d.At
			}
		}
	}
	if low < 0 {
		return 0, delivered, 0
	}
	return delivered - f + 1, delivered, highAt.Sub(lowAt)
}

// rewindAllowed reports whether a handoff may deliver again offsets
// earlier claims delivered over span: no more than b.Rewind, or within
// b.Window however many.
func rewindAllowed(b Bounds, again int64, span time.Duration) bool {
	return again <= b.Rewind || (b.Window > 0 && span <= b.Window)
}

// committedAtClaim returns the committed offset when c's claim was made:
// the state of the node with the highest zxid below the epoch's transaction
// if that was seen, else the last seen before the first delivery. A deleted
// node (a reset) has no zxid here.
func committedAtClaim(h *History, cs []Commit, c *claimSpan) (int64, bool) {
	claimZxid := int64(-1)
	for _, e := range h.Epochs {
		if e.Partition == c.p && e.Epoch == c.epoch {
			claimZxid = e.Zxid
		}
	}
	value, found, best := int64(-1), false, int64(0)
	for _, s := range cs {
		switch {
		case claimZxid >= 0 && s.Zxid > best && s.Zxid < claimZxid:
			value, found, best = s.Value, true, s.Zxid
		case claimZxid < 0 && !s.At.After(c.first.At):
			value, found = s.Value, true
		}
	}
	return value, found && value >= 0
}

func anyKnown(ix *historyIndex, p int32, from, to int64) bool {
	for o := from; o < to; o++ {
		if ix.known[offsetKey{p, o}] {
			return true
		}
	}
	return false
}
