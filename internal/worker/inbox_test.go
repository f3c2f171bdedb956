package worker

import "testing"

// Messages are taken most urgent first, each once; a newer seek replaces
// one not taken yet; posting a stop twice is one stop.
func TestInboxOrderAndOnce(t *testing.T) {
	cancelled := 0
	in := NewInbox(func() { cancelled++ })
	in.SeekTo(3)
	in.SeekTo(9)
	in.Pause()
	in.Stop()
	in.Stop()
	in.Lost()
	if !in.Pending() {
		t.Fatal("messages posted, but none pending")
	}
	var got []Event
	for {
		m, ok := in.Take()
		if !ok {
			break
		}
		if m.Event == Seek && m.SeekTo != 9 {
			t.Errorf("seek to %d, want the newer target 9", m.SeekTo)
		}
		got = append(got, m.Event)
	}
	want := []Event{Loss, Stop, Seek, Pause}
	if len(got) != len(want) {
		t.Fatalf("took %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("took %v, want %v", got, want)
		}
	}
	if in.Pending() {
		t.Error("pending after everything was taken")
	}
	if cancelled != 2 {
		t.Errorf("context cancelled %d times, want once per distinct ending message (2)", cancelled)
	}
	if !in.Has(Stop) || !in.Has(Loss) || in.Has(Abandon) {
		t.Error("has does not remember what was posted")
	}
	in.Pause()
	if m, ok := in.Take(); !ok || m.Event != Pause {
		t.Errorf("a pause posted again after it was taken: took %v, %v", m.Event, ok)
	}
}

// A channel from wait closes at the next post, also one that came between
// wait and the check for messages; posting a stop again wakes nobody.
func TestInboxWait(t *testing.T) {
	in := NewInbox(nil)
	ch := in.Wait()
	if _, ok := in.Take(); ok {
		t.Fatal("a message before any was posted")
	}
	in.Stop()
	select {
	case <-ch:
	default:
		t.Fatal("wait's channel still open after a post")
	}
	in.Take()
	ch = in.Wait()
	in.Stop()
	select {
	case <-ch:
		t.Fatal("a stop posted again woke a waiter")
	default:
	}
	in.SeekTo(1)
	select {
	case <-ch:
	default:
		t.Fatal("a seek did not wake the waiter")
	}
}
