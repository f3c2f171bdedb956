package offsets

import "testing"

func TestInDoubt(t *testing.T) {
	type write struct {
		offset   int64
		expected int32
	}
	cases := []struct {
		name    string
		writes  []write
		stored  int64
		version int32
		ours    bool
	}{
		{"nothing in doubt", nil, 10, 4, false},
		{"set applied", []write{{10, 3}}, 10, 4, true},
		{"create applied", []write{{10, -1}}, 10, 0, true},
		{"other value at the next version", []write{{10, 3}}, 11, 4, false},
		{"our value, version moved twice", []write{{10, 3}}, 10, 5, false},
		{"our value at the same version", []write{{10, 3}}, 10, 3, false},
		{"second of two retries applied", []write{{10, 3}, {12, 3}}, 12, 4, true},
		{"first of two retries applied", []write{{10, 3}, {12, 3}}, 10, 4, true},
		{"older expectation forgotten", []write{{10, 3}, {12, 4}}, 10, 4, false},
		{"newer expectation kept", []write{{10, 3}, {12, 4}}, 12, 5, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var d InDoubt
			for _, w := range c.writes {
				d.Add(w.offset, w.expected)
			}
			if got := d.Ours(c.stored, c.version); got != c.ours {
				t.Fatalf("Ours(%d, %d) = %v, want %v", c.stored, c.version, got, c.ours)
			}
			d.Clear()
			if len(d.offsets) > 0 || d.Ours(c.stored, c.version) {
				t.Fatal("cleared, yet still in doubt")
			}
		})
	}
}
