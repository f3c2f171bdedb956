package main

import (
	"errors"
	"math"
	"testing"
	"time"
)

func TestParseTarget(t *testing.T) {
	at := time.Date(2024, 5, 1, 10, 0, 0, 0, time.UTC)
	good := []struct {
		args []string
		want target
	}{
		{[]string{"earliest"}, target{kind: targetEarliest}},
		{[]string{"latest"}, target{kind: targetLatest}},
		{[]string{"shift", "-5"}, target{kind: targetShift, n: -5}},
		{[]string{"shift", "+5"}, target{kind: targetShift, n: 5}},
		{[]string{"shift", "7"}, target{kind: targetShift, n: 7}},
		{[]string{"to", "0"}, target{kind: targetTo, n: 0}},
		{[]string{"to", "42"}, target{kind: targetTo, n: 42}},
		{[]string{"2024-05-01T10:00:00Z"}, target{kind: targetTime, at: at}},
		{[]string{"2024-05-01T12:00:00+02:00"}, target{kind: targetTime, at: at}},
	}
	for _, c := range good {
		got, err := parseTarget(c.args)
		if err != nil || got.kind != c.want.kind || got.n != c.want.n || !got.at.Equal(c.want.at) {
			t.Errorf("parseTarget(%q) = %+v, %v; want %+v", c.args, got, err, c.want)
		}
	}
	bad := [][]string{
		nil, {"oldest"}, {"earliest", "1"}, {"shift"}, {"shift", "x"}, {"shift", "1", "2"},
		{"to", "-1"}, {"to"}, {"2024-05-01"}, {"2024-05-01T10:00:00Z", "x"},
	}
	for _, args := range bad {
		if got, err := parseTarget(args); err == nil {
			t.Errorf("parseTarget(%q) = %+v, want an error", args, got)
		}
	}
}

func TestResolveTarget(t *testing.T) {
	// The partition holds [100, 200]; 150 is committed.
	st := partitionState{topic: "t", partition: 3, committed: 150, earliest: 100, latest: 200}
	noTime := func(int64) (int64, error) { t.Fatal("byTime called for a target without a time"); return 0, nil }
	cases := []struct {
		tgt  target
		st   partitionState
		want int64
	}{
		{target{kind: targetEarliest}, st, 100},
		{target{kind: targetLatest}, st, 200},
		{target{kind: targetShift, n: -10}, st, 140},
		{target{kind: targetShift, n: 10}, st, 160},
		{target{kind: targetShift, n: 0}, st, 150},
		{target{kind: targetShift, n: -51}, st, 100},                  // clamped to earliest
		{target{kind: targetShift, n: 51}, st, 200},                   // clamped to latest
		{target{kind: targetShift, n: math.MaxInt64}, st, 200},        // no overflow
		{target{kind: targetShift, n: math.MinInt64}, st, 100},        // no overflow
		{target{kind: targetTo, n: 100}, st, 100},                     // range ends are in range
		{target{kind: targetTo, n: 200}, st, 200},                     //
		{target{kind: targetTo, n: 123}, st, 123},                     //
		{target{kind: targetShift, n: 5}, withCommitted(st, 20), 100}, // committed below earliest (retention): clamped
		{target{kind: targetEarliest}, withCommitted(st, -1), 100},    // no committed offset needed
	}
	for _, c := range cases {
		got, err := c.tgt.resolve(c.st, noTime)
		if err != nil || got != c.want {
			t.Errorf("%v on %+v = %d, %v; want %d", c.tgt, c.st, got, err, c.want)
		}
	}

	for _, n := range []int64{99, 201, 0} {
		_, err := target{kind: targetTo, n: n}.resolve(st, noTime)
		var oor *OutOfRangeError
		if !errors.As(err, &oor) || oor.Offset != n || oor.Earliest != 100 || oor.Latest != 200 || oor.Topic != "t" || oor.Partition != 3 {
			t.Errorf("to %d: err = %v, want an *OutOfRangeError naming t/3, %d and [100, 200]", n, err, n)
		}
	}

	if _, err := (target{kind: targetShift, n: 1}).resolve(withCommitted(st, -1), noTime); !errors.Is(err, errNoCommitted) {
		t.Errorf("shift without a committed offset: err = %v, want errNoCommitted", err)
	}
}

func TestResolveTime(t *testing.T) {
	st := partitionState{topic: "t", partition: 0, committed: 150, earliest: 100, latest: 200}
	at := time.Date(2024, 5, 1, 10, 0, 0, 0, time.UTC)
	tgt := target{kind: targetTime, at: at}
	var asked int64
	lookup := func(answer int64, err error) func(int64) (int64, error) {
		return func(ms int64) (int64, error) { asked = ms; return answer, err }
	}
	if got, err := tgt.resolve(st, lookup(170, nil)); err != nil || got != 170 {
		t.Errorf("time found at 170: %d, %v", got, err)
	}
	if asked != at.UnixMilli() {
		t.Errorf("asked Kafka for %d ms, want %d", asked, at.UnixMilli())
	}
	if got, err := tgt.resolve(st, lookup(-1, nil)); err != nil || got != 200 {
		t.Errorf("no message that recent: %d, %v; want the high-water mark 200", got, err)
	}
	if got, err := tgt.resolve(st, lookup(50, nil)); err != nil || got != 100 {
		t.Errorf("answer below earliest: %d, %v; want 100", got, err)
	}
	boom := errors.New("boom")
	if _, err := tgt.resolve(st, lookup(0, boom)); !errors.Is(err, boom) {
		t.Errorf("lookup error: %v, want it wrapped", err)
	}
}

func withCommitted(s partitionState, c int64) partitionState { s.committed = c; return s }
