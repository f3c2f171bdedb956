package consumergroup

import (
	"os"
	"strings"
	"testing"
)

// The table in worker_lifecycle.go's comment is what a reader checks; the
// transitions array is what runs. They must agree cell by cell, and the
// comment must cover every state and every event.
func TestLifecycleTableMatchesItsDocumentation(t *testing.T) {
	src, err := os.ReadFile("worker_lifecycle.go")
	if err != nil {
		t.Fatal(err)
	}
	stateByName := map[string]workerState{}
	for s := workerState(0); s < numWorkerStates; s++ {
		stateByName[s.String()] = s
	}
	var header []workerEvent
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
			if got := next(from, header[i]); got != want {
				t.Errorf("next(%v, %v) = %v, the documented table says %v", from, header[i], got, want)
			}
		}
	}
	if len(header) != int(numWorkerEvents) || rows != int(numWorkerStates) {
		t.Fatalf("documented table has %d events and %d states, want %d and %d", len(header), rows, numWorkerEvents, numWorkerStates)
	}
}

func eventByName(t *testing.T, name string) workerEvent {
	for e := workerEvent(0); e < numWorkerEvents; e++ {
		if e.String() == name {
			return e
		}
	}
	t.Fatalf("unknown event %q", name)
	return 0
}

// The properties the lifecycle exists for, checked on every cell.
func TestLifecycleProperties(t *testing.T) {
	ends := []workerEvent{eventAbandon, eventLoss, eventExpiry} // the claim may no longer be ours
	for s := workerState(0); s < numWorkerStates; s++ {
		for e := workerEvent(0); e < numWorkerEvents; e++ {
			n := next(s, e)
			if n >= numWorkerStates {
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
			switch n := next(s, e); {
			case s == stateClaiming && n != stateDone:
				t.Errorf("next(claiming, %v) = %v: nothing is held yet, the worker must end", e, n)
			case s > stateClaiming && s < stateReleasing && n != stateReleasing:
				t.Errorf("next(%v, %v) = %v, want releasing: no drain or commit once the claim may be gone", s, e, n)
			}
		}
	}
	// A stop never skips the drain, and never restarts one.
	if n := next(stateConsuming, eventStop); n != stateDraining {
		t.Errorf("next(consuming, stop) = %v, want draining", n)
	}
	if n := next(stateDraining, eventStop); n != stateDraining {
		t.Errorf("next(draining, stop) = %v, want draining", n)
	}
	// A stop while fenced off skips the drain and the commit, once
	// stopping it changes nothing; the end of a fetch source reopens one.
	if n := next(stateConsuming, eventStopFenced); n != stateReleasing {
		t.Errorf("next(consuming, stop-fenced) = %v, want releasing", n)
	}
	for _, s := range []workerState{stateDraining, stateCommitting, stateReleasing} {
		if n := next(s, eventStopFenced); n != next(s, eventStop) {
			t.Errorf("next(%v, stop-fenced) = %v, want what a stop does (%v)", s, n, next(s, eventStop))
		}
	}
	if n := next(stateConsuming, eventSourceEnded); n != stateConsuming {
		t.Errorf("next(consuming, source-ended) = %v, want consuming", n)
	}
	// Neither a pause nor the end of a source ever moves a worker.
	for s := workerState(0); s < numWorkerStates; s++ {
		for _, e := range []workerEvent{eventPause, eventSourceEnded} {
			if n := next(s, e); n != s {
				t.Errorf("next(%v, %v) = %v, want to stay", s, e, n)
			}
		}
	}
	// A seek while consuming resumes; while draining, nothing marked from
	// the old position can be committed, so the drain ends.
	if n := next(stateConsuming, eventSeek); n != stateConsuming {
		t.Errorf("next(consuming, seek) = %v, want consuming", n)
	}
	if n := next(stateDraining, eventSeek); n != stateCommitting {
		t.Errorf("next(draining, seek) = %v, want committing", n)
	}
	// Each state's own work, when it ends, leads to the next stage, and
	// every worker gets to done.
	s := stateClaiming
	for steps := 0; s != stateDone; steps++ {
		if steps > int(numWorkerStates) {
			t.Fatal("finished events never reach done")
		}
		s = next(s, eventFinished)
	}
	for e := workerEvent(0); e < numWorkerEvents; e++ {
		if n := next(stateDone, e); n != stateDone {
			t.Errorf("next(done, %v) = %v: done is final", e, n)
		}
	}
}

func TestReleaseFor(t *testing.T) {
	cases := []struct {
		name                  string
		claimSession, current int64
		closed, lost          bool
		want                  releaseKind
	}{
		{"still ours", 7, 7, false, false, releaseOwnerNode},
		{"epoch moved, session alive", 7, 7, false, true, releaseAfterLoss},
		{"session replaced", 7, 8, false, false, releaseNothing},
		{"session replaced, lost", 7, 8, false, true, releaseNothing},
		{"session closed", 7, 7, true, false, releaseNothing},
		{"no session", 7, 0, false, false, releaseNothing},
	}
	for _, c := range cases {
		if got := releaseFor(c.claimSession, c.current, c.closed, c.lost); got != c.want {
			t.Errorf("%s: releaseFor = %v, want %v", c.name, got, c.want)
		}
	}
}

// Messages are taken most urgent first, each once; a newer seek replaces
// one not taken yet; posting a stop twice is one stop.
func TestInboxOrderAndOnce(t *testing.T) {
	cancelled := 0
	in := newInbox(func() { cancelled++ })
	in.seek(3)
	in.seek(9)
	in.pause()
	in.stop()
	in.stop()
	in.lost()
	if !in.pending.Load() {
		t.Fatal("messages posted, but none pending")
	}
	var got []workerEvent
	for {
		m, ok := in.take()
		if !ok {
			break
		}
		if m.event == eventSeek && m.seekTo != 9 {
			t.Errorf("seek to %d, want the newer target 9", m.seekTo)
		}
		got = append(got, m.event)
	}
	want := []workerEvent{eventLoss, eventStop, eventSeek, eventPause}
	if len(got) != len(want) {
		t.Fatalf("took %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("took %v, want %v", got, want)
		}
	}
	if in.pending.Load() {
		t.Error("pending after everything was taken")
	}
	if cancelled != 2 {
		t.Errorf("context cancelled %d times, want once per distinct ending message (2)", cancelled)
	}
	if !in.has(eventStop) || !in.has(eventLoss) || in.has(eventAbandon) {
		t.Error("has does not remember what was posted")
	}
	in.pause()
	if m, ok := in.take(); !ok || m.event != eventPause {
		t.Errorf("a pause posted again after it was taken: took %v, %v", m.event, ok)
	}
}

// A channel from wait closes at the next post, also one that came between
// wait and the check for messages; posting a stop again wakes nobody.
func TestInboxWait(t *testing.T) {
	in := newInbox(nil)
	ch := in.wait()
	if _, ok := in.take(); ok {
		t.Fatal("a message before any was posted")
	}
	in.stop()
	select {
	case <-ch:
	default:
		t.Fatal("wait's channel still open after a post")
	}
	in.take()
	ch = in.wait()
	in.stop()
	select {
	case <-ch:
		t.Fatal("a stop posted again woke a waiter")
	default:
	}
	in.seek(1)
	select {
	case <-ch:
	default:
		t.Fatal("a seek did not wake the waiter")
	}
}
