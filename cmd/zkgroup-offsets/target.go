package main

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// targetKind is what a reset moves offsets to.
type targetKind int

const (
	targetEarliest targetKind = iota + 1 // the oldest offset Kafka has
	targetLatest                         // the high-water mark
	targetTime                           // the first offset at or after a time
	targetShift                          // the committed offset plus n, clamped
	targetTo                             // exactly n, refused out of range
)

// target is a parsed TARGET argument of reset.
type target struct {
	kind targetKind
	n    int64     // targetShift, targetTo
	at   time.Time // targetTime
}

func (t target) String() string {
	switch t.kind {
	case targetEarliest:
		return "earliest"
	case targetLatest:
		return "latest"
	case targetTime:
		return t.at.Format(time.RFC3339Nano)
	case targetShift:
		return fmt.Sprintf("shift %+d", t.n)
	case targetTo:
		return fmt.Sprintf("to %d", t.n)
	}
	return "?"
}

// parseTarget parses reset's TARGET: "earliest", "latest", an RFC 3339
// time, "shift N" (N signed) or "to N" (N >= 0).
func parseTarget(args []string) (target, error) {
	if len(args) == 0 {
		return target{}, errors.New("missing TARGET (earliest, latest, an RFC 3339 time, shift N, to N)")
	}
	word := args[0]
	one := func() error {
		if len(args) != 1 {
			return fmt.Errorf("unexpected arguments after %s: %q", word, args[1:])
		}
		return nil
	}
	number := func() (int64, error) {
		if len(args) != 2 {
			return 0, fmt.Errorf("%s takes one number, e.g. %q", word, word+" 10")
		}
		n, err := strconv.ParseInt(strings.TrimPrefix(args[1], "+"), 10, 64)
		if err != nil {
			return 0, fmt.Errorf("%s %s: not an integer", word, args[1])
		}
		return n, nil
	}
	switch word {
	case "earliest":
		return target{kind: targetEarliest}, one()
	case "latest":
		return target{kind: targetLatest}, one()
	case "shift":
		n, err := number()
		return target{kind: targetShift, n: n}, err
	case "to":
		n, err := number()
		if err == nil && n < 0 {
			err = fmt.Errorf("to %d: an offset is >= 0", n)
		}
		return target{kind: targetTo, n: n}, err
	}
	at, err := time.Parse(time.RFC3339Nano, word)
	if err != nil {
		return target{}, fmt.Errorf("unknown TARGET %q: want earliest, latest, an RFC 3339 time (2024-05-01T10:00:00Z), shift N or to N", word)
	}
	return target{kind: targetTime, at: at}, one()
}

// durationTarget is the target of reset -by-duration d: the time d
// (a positive Go duration) before now.
func durationTarget(d string, now time.Time) (target, error) {
	dur, err := time.ParseDuration(d)
	if err != nil {
		return target{}, fmt.Errorf("%q is not a duration (1h, 90m, 2h30m)", d)
	}
	if dur <= 0 {
		return target{}, fmt.Errorf("%s: the duration must be positive", d)
	}
	return target{kind: targetTime, at: now.Add(-dur)}, nil
}

// OutOfRangeError is a requested offset outside what the partition holds.
type OutOfRangeError struct {
	Topic     string
	Partition int32
	Offset    int64
	Earliest  int64
	Latest    int64
}

func (e *OutOfRangeError) Error() string {
	return fmt.Sprintf("%s/%d: offset %d is out of range: the partition holds [%d, %d] (earliest to high-water mark)",
		e.Topic, e.Partition, e.Offset, e.Earliest, e.Latest)
}

// errNoCommitted is wrapped by the error of a shift on a partition without
// a committed offset.
var errNoCommitted = errors.New("no committed offset")

// partitionState is what resolving a target needs to know of a partition.
type partitionState struct {
	topic     string
	partition int32
	committed int64 // -1: none
	earliest  int64
	latest    int64
}

// resolve returns the offset the target means for the partition. byTime
// asks Kafka for the first offset at or after a time in milliseconds (-1 if
// none); it is only called for a time target.
func (t target) resolve(s partitionState, byTime func(millis int64) (int64, error)) (int64, error) {
	switch t.kind {
	case targetEarliest:
		return s.earliest, nil
	case targetLatest:
		return s.latest, nil
	case targetTo:
		if t.n < s.earliest || t.n > s.latest {
			return 0, &OutOfRangeError{Topic: s.topic, Partition: s.partition, Offset: t.n, Earliest: s.earliest, Latest: s.latest}
		}
		return t.n, nil
	case targetShift:
		if s.committed < 0 {
			return 0, fmt.Errorf("%s/%d: %w to shift (reset it to earliest, latest, a time or an offset first)", s.topic, s.partition, errNoCommitted)
		}
		return clamp(addSaturating(s.committed, t.n), s.earliest, s.latest), nil
	case targetTime:
		off, err := byTime(t.at.UnixMilli())
		if err != nil {
			return 0, fmt.Errorf("%s/%d: offset at %s: %w", s.topic, s.partition, t, err)
		}
		if off < 0 { // no message that recent
			return s.latest, nil
		}
		return clamp(off, s.earliest, s.latest), nil
	}
	return 0, fmt.Errorf("unknown target %v", t)
}

func clamp(v, lo, hi int64) int64 {
	return max(lo, min(v, hi))
}

// addSaturating is a+b, held at the int64 limits instead of wrapping.
func addSaturating(a, b int64) int64 {
	switch {
	case b > 0 && a > math.MaxInt64-b:
		return math.MaxInt64
	case b < 0 && a < math.MinInt64-b:
		return math.MinInt64
	}
	return a + b
}
