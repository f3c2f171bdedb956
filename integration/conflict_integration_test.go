package integration

import (
	"errors"
	"testing"
	"time"

	"github.com/zkgroup/kafka/consumergroup"
	"github.com/zkgroup/kafka/internal/testenv"
	"github.com/zkgroup/kafka/kazoo"
)

// TestIntegrationOffsetResetWhileOwned: an operator rewinds the committed
// offset of a partition the group owns. The group's next commit finds the
// node changed underneath: it reports an *OffsetConflictError, drops its
// pending marks, resumes at the stored offset, and never overwrites the
// operator's value with marks from before the reset.
func TestIntegrationOffsetResetWhileOwned(t *testing.T) {
	testenv.Integration(t)
	topic := newTopic(t, 1)
	counts := produce(t, topic, 200)
	group := testenv.UniqueName("g")
	kz := zkClient(t)
	h := newHistory(t, group, topic, 1)

	cfg := testConfig()
	cfg.Offsets.CommitInterval = 50 * time.Millisecond
	cg := join(t, group, []string{topic}, cfg)
	defer closeGroup(t, cg)

	// Consume the first 100 and let them be committed.
	next := int64(0)
	take := func(until int64) {
		t.Helper()
		for next < until {
			select {
			case m := <-cg.Messages():
				if m.Offset != next {
					t.Fatalf("got offset %d, want %d", m.Offset, next)
				}
				next++
				h.delivered(1, m)
				_ = cg.CommitUpto(m)
			case err := <-cg.Errors():
				t.Logf("error: %v", err)
			case <-time.After(30 * time.Second):
				t.Fatalf("timeout at offset %d", next)
			}
		}
	}
	take(100)
	waitFor(t, 10*time.Second, "offset 100 committed", func() bool {
		o, _ := kz.Consumergroup(group).FetchOffset(topic, 0)
		return o == 100
	})

	// The operator rewinds to 40 while the group owns the partition.
	h.reset(0, 40)
	if err := kz.Consumergroup(group).CommitOffset(topic, 0, 40); err != nil {
		t.Fatal(err)
	}
	// Keep consuming: the group must notice on its next commit, report,
	// and start again at 40.
	var conflict *consumergroup.OffsetConflictError
	rewound := false
	deadline := time.After(30 * time.Second)
	for !rewound || conflict == nil {
		select {
		case m := <-cg.Messages():
			if m.Offset == 40 && next > 40 {
				rewound = true
				next = 40
			}
			if m.Offset != next {
				t.Fatalf("got offset %d, want %d", m.Offset, next)
			}
			next++
			h.delivered(1, m)
			_ = cg.CommitUpto(m)
		case err := <-cg.Errors():
			if errors.As(err, &conflict) {
				t.Logf("reported: %v", err)
				if conflict.Stored != 40 || !errors.Is(err, kazoo.ErrOffsetConflict) {
					t.Errorf("conflict = %+v; want Stored 40 wrapping kazoo.ErrOffsetConflict", conflict)
				}
			} else {
				t.Logf("error: %v", err)
			}
		case <-deadline:
			t.Fatalf("after 30s: rewound=%v conflict=%v (next %d)", rewound, conflict, next)
		}
	}
	take(counts[0])
	if err := cg.FlushOffsets(); err != nil {
		t.Fatalf("flush: %v", err)
	}
	if o, err := kz.Consumergroup(group).FetchOffset(topic, 0); err != nil || o != counts[0] {
		t.Errorf("final stored offset %d (%v), want %d", o, err, counts[0])
	}
	// The only decrease the recorder may see is the operator's own, noted
	// as a reset (it may also miss it, when the group's next commits land
	// before its read).
	h.assert(expectation{produced: counts})
}
