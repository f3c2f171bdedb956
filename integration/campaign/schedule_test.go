package campaign

import (
	"reflect"
	"testing"
	"time"
)

var testSchedule = ScheduleConfig{
	Duration: 60 * time.Second, Members: 3, MaxMembers: 5, Brokers: 3, Partitions: 8,
	Kinds:  Kinds,
	MinGap: 500 * time.Millisecond, MaxGap: 3 * time.Second, MinHold: time.Second, MaxHold: 6 * time.Second,
}

// A seed replays: the same schedule twice, another seed another one.
func TestGenerateReplaysASeed(t *testing.T) {
	a, b := Generate(42, testSchedule), Generate(42, testSchedule)
	if !reflect.DeepEqual(a, b) {
		t.Fatalf("seed 42 gave two schedules:\n%s\n%s", a, b)
	}
	if len(a.Steps) < 5 {
		t.Fatalf("seed 42: %d faults in 60s, want several:\n%s", len(a.Steps), a)
	}
	if c := Generate(43, testSchedule); reflect.DeepEqual(a.Steps, c.Steps) {
		t.Errorf("seeds 42 and 43 gave the same schedule:\n%s", a)
	}
}

// Every schedule keeps its faults apart, inside the duration, with victims
// that exist: member faults hit a member running then, at least one member
// always runs.
func TestGenerateVictimsAreValid(t *testing.T) {
	for seed := uint64(0); seed < 200; seed++ {
		s := Generate(seed, testSchedule)
		live := map[int]bool{0: true, 1: true, 2: true}
		end := time.Duration(0)
		for _, st := range s.Steps {
			if st.At < end || st.At+st.For > testSchedule.Duration {
				t.Fatalf("seed %d: %v overlaps the fault before (ends %s) or the end", seed, st, end)
			}
			end = st.At + st.For
			switch st.Kind {
			case KillMember, PauseMember, CutClient:
				if !live[st.Victim] {
					t.Fatalf("seed %d: %v hits a member not running", seed, st)
				}
			case Leave:
				if !live[st.Victim] || len(live) < 2 {
					t.Fatalf("seed %d: %v leaves %d members", seed, st, len(live)-1)
				}
				delete(live, st.Victim)
			case Join:
				if live[st.Victim] || st.Victim >= testSchedule.MaxMembers {
					t.Fatalf("seed %d: %v joins a slot in use or past the cap", seed, st)
				}
				live[st.Victim] = true
			case RestartBroker:
				if st.Victim < 1 || st.Victim > testSchedule.Brokers {
					t.Fatalf("seed %d: %v: no such broker", seed, st)
				}
			case CutFollower:
				if st.Victim != 0 && st.Victim != 1 {
					t.Fatalf("seed %d: %v: an ensemble of 3 has 2 followers", seed, st)
				}
			case ResetOffsets:
				if st.Victim < 0 || int32(st.Victim) >= testSchedule.Partitions {
					t.Fatalf("seed %d: %v: no such partition", seed, st)
				}
			}
		}
	}
}
