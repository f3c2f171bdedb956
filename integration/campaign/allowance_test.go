package campaign

import (
	"reflect"
	"testing"
	"time"
)

// Every claim allows the uncommitted window, against the fault blamed for
// its first delivery; a broker restart allows it on every partition, a
// reset on its own.
func TestAllowedDuplicates(t *testing.T) {
	h := clean() // claims A (100 ms) and B (700 ms), no fault near
	if got, want := AllowedDuplicates(h, testBounds), map[Kind]int64{"none": 6}; !reflect.DeepEqual(got, want) {
		t.Errorf("clean history: allowed %v, want %v", got, want)
	}
	h.Faults = append(h.Faults,
		Fault{Kind: KillMember, Victim: "B", Start: ms(1300), End: ms(1300)},
		Fault{Kind: RestartBroker, Victim: "broker1", Start: ms(1400), End: ms(1450)})
	h.Epochs = append(h.Epochs, Epoch{Partition: 0, Epoch: 3, Zxid: 30, At: ms(1250)})
	deliver(h, "C", 3, 1350, 8, 9) // after the kill, before the restart
	got := AllowedDuplicates(h, testBounds)
	if want := (map[Kind]int64{"none": 6, KillMember: 3, RestartBroker: 3}); !reflect.DeepEqual(got, want) {
		t.Errorf("a kill and a broker restart: allowed %v, want %v", got, want)
	}
	h.Resets = append(h.Resets, Reset{Partition: 0, At: ms(1340), End: ms(1345)})
	h.Faults = append(h.Faults, Fault{Kind: ResetOffsets, Victim: "p0", Start: ms(1340), End: ms(1345)})
	got = AllowedDuplicates(h, testBounds)
	if want := (map[Kind]int64{"none": 6, ResetOffsets: 6, RestartBroker: 3}); !reflect.DeepEqual(got, want) {
		t.Errorf("C's claim right after a reset: allowed %v, want %v", got, want)
	}
}

func TestFaultTime(t *testing.T) {
	got := FaultTime([]Fault{
		{Kind: KillMember, Start: ms(0), End: ms(1500)},
		{Kind: KillMember, Start: ms(2000), End: ms(2500)},
		{Kind: Join, Start: ms(3000), End: ms(2999)}, // a clock step: no time
	})
	if want := (map[Kind]time.Duration{KillMember: 2 * time.Second}); !reflect.DeepEqual(got, want) {
		t.Errorf("fault time %v, want %v", got, want)
	}
}

// A claim that delivers again a backlog its predecessor caught up within
// the window is allowed what it delivered again.
func TestAllowedDuplicatesOfABacklog(t *testing.T) {
	h := clean()
	h.Commits = h.Commits[:1]
	h.Epochs = append(h.Epochs, Epoch{Partition: 0, Epoch: 3, Zxid: 30, At: ms(1500)})
	deliver(h, "C", 3, 1500, 5, 6, 7, 8, 9)
	h.Faults = append(h.Faults, Fault{Kind: CutClient, Victim: "B", Start: ms(750), End: ms(1400)})
	b := Bounds{Orphan: testBounds.Orphan, Rewind: testBounds.Rewind, Window: time.Second}
	if got, want := AllowedDuplicates(h, b), (map[Kind]int64{"none": 6, CutClient: 5}); !reflect.DeepEqual(got, want) {
		t.Errorf("allowed %v, want %v", got, want)
	}
}
