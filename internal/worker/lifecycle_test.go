package worker

import (
	"os"
	"strings"
	"testing"
)

// The table in lifecycle.go's comment is what a reader checks; the
// transitions array is what runs. They must agree cell by cell, and the
// comment must cover every state and every event.
func TestLifecycleTableMatchesItsDocumentation(t *testing.T) {
	src, err := os.ReadFile("lifecycle.go")
	if err != nil {
		t.Fatal(err)
	}
	stateByName := map[string]State{}
	for s := State(0); s < NumStates; s++ {
		stateByName[s.String()] = s
	}
	var header []Event
	rows := 0
	for _, line := range strings.Split(string(src), "\n") {
		fields := strings.Fields(strings.TrimPrefix(line, "//"))
		if len(fields) == 0 || !strings.HasPrefix(line, "//\t") {
			continue
		}
		if fields[0] == "state" { // state \ event  finished  stop ...
			for _, name := range fields[3:] {
				e := eventByName(t, name)
				header = append(header, e)
			}
			continue
		}
		from, ok := stateByName[fields[0]]
		if !ok || header == nil {
			continue
		}
		rows++
		if len(fields)-1 != len(header) {
			t.Fatalf("row %q has %d cells, want %d", fields[0], len(fields)-1, len(header))
		}
		for i, cell := range fields[1:] {
			want, ok := stateByName[cell]
			if !ok {
				t.Fatalf("row %q: unknown state %q", fields[0], cell)
			}
			if got := Next(from, header[i]); got != want {
				t.Errorf("next(%v, %v) = %v, the documented table says %v", from, header[i], got, want)
			}
		}
	}
	if len(header) != int(NumEvents) || rows != int(NumStates) {
		t.Fatalf("documented table has %d events and %d states, want %d and %d", len(header), rows, NumEvents, NumStates)
	}
}

func eventByName(t *testing.T, name string) Event {
	for e := Event(0); e < NumEvents; e++ {
		if e.String() == name {
			return e
		}
	}
	t.Fatalf("unknown event %q", name)
	return 0
}

// The properties the lifecycle exists for, checked on every cell.
func TestLifecycleProperties(t *testing.T) {
	ends := []Event{Abandon, Loss, Expiry} // the claim may no longer be ours
	for s := State(0); s < NumStates; s++ {
		for e := Event(0); e < NumEvents; e++ {
			n := Next(s, e)
			if n >= NumStates {
				t.Fatalf("next(%v, %v) = %d: not a state", s, e, n)
			}
			// A worker never goes back to an earlier state: no claim
			// taken twice, no drain after a commit, no commit after a
			// release.
			if n < s {
				t.Errorf("next(%v, %v) = %v goes backwards", s, e, n)
			}
		}
		// Once the claim may be gone, nothing more is drained or committed.
		for _, e := range ends {
			switch n := Next(s, e); {
			case s == Claiming && n != Done:
				t.Errorf("Next(claiming, %v) = %v: nothing is held yet, the worker must end", e, n)
			case s > Claiming && s < Releasing && n != Releasing:
				t.Errorf("next(%v, %v) = %v, want releasing: no drain or commit once the claim may be gone", s, e, n)
			}
		}
	}
	// A stop never skips the drain, and never restarts one.
	if n := Next(Consuming, Stop); n != Draining {
		t.Errorf("Next(consuming, stop) = %v, want draining", n)
	}
	if n := Next(Draining, Stop); n != Draining {
		t.Errorf("Next(draining, stop) = %v, want draining", n)
	}
	// A stop while fenced off skips the drain and the commit, once
	// stopping it changes nothing; the end of a fetch source reopens one.
	if n := Next(Consuming, StopFenced); n != Releasing {
		t.Errorf("Next(consuming, stop-fenced) = %v, want releasing", n)
	}
	for _, s := range []State{Draining, Committing, Releasing} {
		if n := Next(s, StopFenced); n != Next(s, Stop) {
			t.Errorf("next(%v, stop-fenced) = %v, want what a stop does (%v)", s, n, Next(s, Stop))
		}
	}
	if n := Next(Consuming, SourceEnded); n != Consuming {
		t.Errorf("Next(consuming, source-ended) = %v, want consuming", n)
	}
	// Neither a pause nor the end of a source ever moves a worker.
	for s := State(0); s < NumStates; s++ {
		for _, e := range []Event{Pause, SourceEnded} {
			if n := Next(s, e); n != s {
				t.Errorf("next(%v, %v) = %v, want to stay", s, e, n)
			}
		}
	}
	// A seek while consuming resumes; while draining, nothing marked from
	// the old position can be committed, so the drain ends.
	if n := Next(Consuming, Seek); n != Consuming {
		t.Errorf("Next(consuming, seek) = %v, want consuming", n)
	}
	if n := Next(Draining, Seek); n != Committing {
		t.Errorf("Next(draining, seek) = %v, want committing", n)
	}
	// Each state's own work, when it ends, leads to the next stage, and
	// every worker gets to done.
	s := Claiming
	for steps := 0; s != Done; steps++ {
		if steps > int(NumStates) {
			t.Fatal("finished events never reach done")
		}
		s = Next(s, Finished)
	}
	for e := Event(0); e < NumEvents; e++ {
		if n := Next(Done, e); n != Done {
			t.Errorf("Next(done, %v) = %v: done is final", e, n)
		}
	}
}

func TestReleaseFor(t *testing.T) {
	cases := []struct {
		name                  string
		claimSession, current int64
		closed, lost          bool
		want                  ReleaseKind
	}{
		{"still ours", 7, 7, false, false, ReleaseOwnerNode},
		{"epoch moved, session alive", 7, 7, false, true, ReleaseAfterLoss},
		{"session replaced", 7, 8, false, false, ReleaseNothing},
		{"session replaced, lost", 7, 8, false, true, ReleaseNothing},
		{"session closed", 7, 7, true, false, ReleaseNothing},
		{"no session", 7, 0, false, false, ReleaseNothing},
	}
	for _, c := range cases {
		if got := ReleaseFor(c.claimSession, c.current, c.closed, c.lost); got != c.want {
			t.Errorf("%s: ReleaseFor = %v, want %v", c.name, got, c.want)
		}
	}
}
