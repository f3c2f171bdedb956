package main

import (
	"slices"
	"testing"
	"time"
)

// at is a time ms milliseconds after a fixed origin.
func at(ms int) time.Time { return time.Unix(1000, 0).Add(time.Duration(ms) * time.Millisecond) }

// flow is a record of partitions partitions, each given a message every
// 100 ms from 0 to until ms, acknowledged at once and delivered 5 ms later
// unless deliver says otherwise (-1: never).
func flow(partitions, until int, deliver func(p int32, ackMS int) int) record {
	rec := record{delivered: make(map[offsetKey]int)}
	for p := range int32(partitions) {
		for i, t := 0, 0; t <= until; i, t = i+1, t+100 {
			k := offsetKey{p, int64(i)}
			rec.acked = append(rec.acked, k)
			rec.ackedAt = append(rec.ackedAt, at(t))
			d := t + 5
			if deliver != nil {
				d = deliver(p, t)
			}
			if d >= 0 {
				rec.deliveries = append(rec.deliveries, delivery{partition: p, offset: int64(i), at: at(d)})
				rec.delivered[k]++
			}
		}
	}
	return rec
}

func deliveryTimes(rec record) []time.Time {
	var ts []time.Time
	for _, d := range rec.deliveries {
		ts = append(ts, d.at)
	}
	return ts
}

func TestWaitingMergesABacklog(t *testing.T) {
	// partition 0 delivers nothing from 1,000 to 2,000 ms, then the backlog at once
	rec := flow(2, 3000, func(p int32, ack int) int {
		if p == 0 && ack >= 1000 && ack < 2000 {
			return 2000
		}
		return ack + 5
	})
	w := waiting(rec, at(5000))
	// from the first message held back (1,000) to the next one's delivery
	// (2,005): a message acknowledged as the backlog is delivered waits on
	if got := longestWait(w[0], at(0), at(3000)); got != 1005*time.Millisecond {
		t.Errorf("partition 0 waited at most %v, want 1.005s", got)
	}
	if got := longestWait(w[1], at(0), at(3000)); got != 5*time.Millisecond {
		t.Errorf("partition 1 waited at most %v, want 5ms", got)
	}
	if got := longestWait(w[0], at(2500), at(3000)); got != 5*time.Millisecond {
		t.Errorf("after the backlog, partition 0 waited at most %v, want 5ms", got)
	}
}

func TestWaitingCountsAMessageNeverDeliveredToTheEnd(t *testing.T) {
	rec := flow(1, 1000, func(_ int32, ack int) int {
		if ack == 500 {
			return -1
		}
		return ack + 5
	})
	if got := longestWait(waiting(rec, at(4000))[0], at(0), at(1000)); got != 3500*time.Millisecond {
		t.Errorf("longest wait %v, want 3.5s (from the lost message's acknowledgement to the end)", got)
	}
}

func TestGroupStalled(t *testing.T) {
	const parts = 6
	cases := []struct {
		name    string
		deliver func(p int32, ack int) int
		want    time.Duration
	}{
		{"flowing", nil, 0},
		{"one partition of six away for a second", func(p int32, ack int) int {
			if p == 0 && ack >= 1000 && ack < 2000 {
				return 2000
			}
			return ack + 5
		}, 0},
		{"every partition stopped from 1,000 to 1,500 ms", func(_ int32, ack int) int {
			if ack >= 1000 && ack < 1500 {
				return 1500
			}
			return ack + 5
		}, 500 * time.Millisecond}, // slices 1,000 to 1,490, one run
		{"every partition stopped from 1,000 to 1,050 ms: shorter than a stall", func(_ int32, ack int) int {
			if ack == 1000 {
				return 1050
			}
			return ack + 5
		}, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rec := flow(parts, 3000, c.deliver)
			got, _ := groupStalled(waiting(rec, at(4000)), deliveryTimes(rec), at(0), at(3000), parts, 100*time.Millisecond)
			if got != c.want {
				t.Errorf("stalled %v, want %v", got, c.want)
			}
		})
	}
}

func TestGroupStalledIgnoresAProducerPause(t *testing.T) {
	rec := flow(6, 3000, nil)
	var kept record
	kept.delivered = rec.delivered
	for i, a := range rec.ackedAt { // nothing produced from 1,000 to 2,000 ms
		if a.Before(at(1000)) || !a.Before(at(2000)) {
			kept.acked = append(kept.acked, rec.acked[i])
			kept.ackedAt = append(kept.ackedAt, a)
		}
	}
	for _, d := range rec.deliveries {
		if d.at.Before(at(1000)) || !d.at.Before(at(2005)) {
			kept.deliveries = append(kept.deliveries, d)
		}
	}
	if got, _ := groupStalled(waiting(kept, at(4000)), deliveryTimes(kept), at(0), at(3000), 6, 100*time.Millisecond); got != 0 {
		t.Errorf("stalled %v during a producer pause, want 0", got)
	}
	acks := slices.Clone(kept.ackedAt)
	slices.SortFunc(acks, time.Time.Compare)
	if got := gapsLonger(acks, at(0), at(3000), 100*time.Millisecond); got != 1100*time.Millisecond {
		t.Errorf("producer stalled %v, want 1.1s (from the last acknowledgement at 900 ms to the next at 2,000)", got)
	}
}

func TestPercentile(t *testing.T) {
	var ds []time.Duration
	for i := 1; i <= 60; i++ {
		ds = append(ds, time.Duration(i))
	}
	if p50, p99 := percentile(ds, 50), percentile(ds, 99); p50 != 30 || p99 != 60 {
		t.Errorf("p50 %v p99 %v, want 30 and 60", p50, p99)
	}
}

func TestCombineTakesTheWorstCountsAndMedianDurations(t *testing.T) {
	rounds := []row{
		{Group: "a", Round: 1, Moved: 0, Lost: 0, WaitMax: 3 * time.Second, Deploy: 30 * time.Second, Acked: 1},
		{Group: "b", Round: 1, Moved: 5},
		{Group: "a", Round: 2, Moved: 2, Lost: 1, WaitMax: 1 * time.Second, Deploy: 10 * time.Second, Acked: 2},
		{Group: "a", Round: 3, Moved: 1, Dups: 4, WaitMax: 2 * time.Second, Deploy: 20 * time.Second, Acked: 3},
	}
	got := combine(rounds, []string{"a", "b"})
	if len(got) != 2 || got[0].Group != "a" || got[1].Group != "b" {
		t.Fatalf("rows %+v, want a then b", got)
	}
	a := got[0]
	if a.Moved != 2 || a.Lost != 1 || a.Dups != 4 {
		t.Errorf("moved %d lost %d duplicates %d, want the most of a round: 2, 1, 4", a.Moved, a.Lost, a.Dups)
	}
	if a.WaitMax != 2*time.Second || a.Deploy != 20*time.Second || a.Acked != 3 || a.Round != 0 {
		t.Errorf("wait max %v deploy %v acked %d round %d, want the medians 2s, 20s and round 3's 3 acked, round 0", a.WaitMax, a.Deploy, a.Acked, a.Round)
	}
}
