package campaign

import "time"

// AllowedDuplicates is how many duplicates each kind of fault in h may
// cause, blamed the way Check blames duplicates: a new claim may deliver
// again the uncommitted window of its partition, so every claim is allowed
// b.Rewind, or what it did deliver again if that is more and earlier claims
// had delivered it within b.Window (a backlog caught up: the bounds a
// handoff-rewind is judged by), counted against the fault blamed for its
// first delivery ("none": no fault near, the claims of the start). A broker restart adds b.Rewind for each
// of h's partitions (a fetch that fails on any partition the broker led
// starts again from the committed offset, without a new claim), a reset
// b.Rewind for its partition. docs/campaign.md, "Duplicates against the
// bound".
func AllowedDuplicates(h *History, b Bounds) map[Kind]int64 {
	allowed := make(map[Kind]int64)
	ix := index(h)
	for _, cs := range ix.claims {
		for i, c := range cs {
			window := b.Rewind
			if again, _, span := rewindOf(ix, cs, i); again > window && rewindAllowed(b, again, span) {
				window = again
			}
			at := c.first.At
			if resetBetween(h.Resets, c.p, at.Add(-b.Orphan), at) {
				allowed[ResetOffsets] += window
				continue
			}
			allowed[blame(h.Faults, at.Add(-b.Orphan), at)] += window
		}
	}
	for _, f := range h.Faults {
		switch f.Kind {
		case RestartBroker:
			allowed[f.Kind] += b.Rewind * int64(h.Partitions)
		case ResetOffsets:
			allowed[f.Kind] += b.Rewind
		}
	}
	return allowed
}

// FaultTime is how long the faults of h lasted in all, by kind: from start
// to end as applied (a join, a leave or a reset lasts as long as the action
// took).
func FaultTime(faults []Fault) map[Kind]time.Duration {
	out := make(map[Kind]time.Duration)
	for _, f := range faults {
		if f.End.After(f.Start) {
			out[f.Kind] += f.End.Sub(f.Start)
		}
	}
	return out
}
