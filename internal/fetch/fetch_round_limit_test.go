package fetch

import "testing"

// TestWithinResponseLimit: a round takes wants while their fetch sizes fit
// the response limit, always at least one, and leaves the rest in order.
func TestWithinResponseLimit(t *testing.T) {
	want := func(offset int64, size int32) *fetchWant { return &fetchWant{offset: offset, size: size} }
	cases := []struct {
		name        string
		sizes       []int32
		limit       int32
		round, rest int
	}{
		{"all fit", []int32{10, 10, 10}, 30, 3, 0},
		{"split", []int32{10, 10, 10, 10}, 25, 2, 2},
		{"first alone larger", []int32{40, 10}, 25, 1, 1},
		{"empty", nil, 25, 0, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var wants []*fetchWant
			for i, s := range c.sizes {
				wants = append(wants, want(int64(i), s))
			}
			round, rest := withinResponseLimit(wants, c.limit)
			if len(round) != c.round || len(rest) != c.rest {
				t.Fatalf("round %v, rest %v; want %d and %d wants", offsetsOf(round), offsetsOf(rest), c.round, c.rest)
			}
			for i, w := range append(round, rest...) {
				if w.offset != int64(i) {
					t.Fatalf("order %v changed", offsetsOf(append(round, rest...)))
				}
			}
		})
	}
}
