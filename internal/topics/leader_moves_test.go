package topics

import (
	"errors"
	"maps"
	"testing"
)

// scriptedSource answers Partitions with parts, or err.
type scriptedSource struct {
	parts []Partition
	err   error
}

func (s *scriptedSource) Partitions(string, Leaders) ([]Partition, error) { return s.parts, s.err }
func (s *scriptedSource) Changed() <-chan struct{}                        { return nil }
func (s *scriptedSource) Close()                                          {}

// Each answer is compared with the previous one for the topic: a leader
// that changed to a broker is reported, by partition; the first answer, a
// partition without a leader now, an unchanged one, a new partition and a
// failed read are not.
func TestWithLeaderMovesReportsChangedLeaders(t *testing.T) {
	src := &scriptedSource{}
	var got []map[int32]int32
	moves := WithLeaderMoves(src, func(topic string, leaders map[int32]int32) {
		if topic != "t" {
			t.Errorf("move reported for topic %q", topic)
		}
		got = append(got, leaders)
	})
	steps := []struct {
		parts []Partition
		err   error
		want  map[int32]int32 // nil: no report
	}{
		{parts: []Partition{{0, 1}, {1, 2}}},                                    // first answer
		{parts: []Partition{{0, 1}, {1, 2}}},                                    // unchanged
		{parts: []Partition{{0, 2}, {1, 2}}, want: map[int32]int32{0: 2}},       // moved
		{parts: []Partition{{0, 2}, {1, -1}}},                                   // no leader now
		{parts: []Partition{{0, 3}, {1, 1}}, want: map[int32]int32{0: 3, 1: 1}}, // moved, and a leader again
		{err: errors.New("read failed")},                                        // nothing to compare
		{parts: []Partition{{0, 3}, {1, 1}, {2, 1}}},                            // a new partition
	}
	for i, s := range steps {
		src.parts, src.err = s.parts, s.err
		got = nil
		parts, err := moves.Partitions("t", Leaders{All: true})
		if !errors.Is(err, s.err) || len(parts) != len(s.parts) {
			t.Fatalf("step %d: %v, %v; want the source's answer", i, parts, err)
		}
		switch {
		case s.want == nil && len(got) > 0:
			t.Errorf("step %d: reported %v, want nothing", i, got)
		case s.want != nil && (len(got) != 1 || !maps.Equal(got[0], s.want)):
			t.Errorf("step %d: reported %v, want %v", i, got, s.want)
		}
	}
}

// A leader not read (LeaderNotRead) is no move, and the last one read is
// kept: a move while it was not read is reported by the next read.
func TestWithLeaderMovesKeepsLeadersNotRead(t *testing.T) {
	src := &scriptedSource{}
	var got []map[int32]int32
	moves := WithLeaderMoves(src, func(_ string, leaders map[int32]int32) { got = append(got, leaders) })
	for i, s := range []struct {
		parts []Partition
		want  map[int32]int32 // nil: no report
	}{
		{parts: []Partition{{0, 1}, {1, 2}}},
		{parts: []Partition{{0, LeaderNotRead}, {1, 2}}},
		{parts: []Partition{{0, LeaderNotRead}, {1, LeaderNotRead}}},
		{parts: []Partition{{0, 3}, {1, 2}}, want: map[int32]int32{0: 3}},
		{parts: []Partition{{0, 3}, {1, LeaderNotRead}, {2, LeaderNotRead}}},
		{parts: []Partition{{0, 3}, {1, 2}, {2, 4}}},
	} {
		src.parts = s.parts
		got = nil
		if _, err := moves.Partitions("t", Leaders{}); err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
		switch {
		case s.want == nil && len(got) > 0:
			t.Errorf("step %d: reported %v, want nothing", i, got)
		case s.want != nil && (len(got) != 1 || !maps.Equal(got[0], s.want)):
			t.Errorf("step %d: reported %v, want %v", i, got, s.want)
		}
	}
}
