package zkwatch

import (
	"testing"
	"testing/synctest"
	"time"

	"go.uber.org/goleak"

	"github.com/zkgroup/kafka/kazoo"
)

// testSet is a Set whose fired leaves a token in wake, as a loop's does.
type testSet struct {
	*Set
	wake chan struct{}
}

func newTestSet() testSet {
	wake := make(chan struct{}, 1)
	return testSet{New(func() {
		select {
		case wake <- struct{}{}:
		default:
		}
	}), wake}
}

// woken reports whether the set holds a wake-up token, taking it.
func woken(ws testSet) bool {
	select {
	case <-ws.wake:
		return true
	default:
		return false
	}
}

func TestSetArmFireWakes(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ws := newTestSet()
		if ws.Armed("ids") {
			t.Fatal("a new watch set has ids armed")
		}
		ch := make(chan kazoo.Event, 1)
		ws.Arm("ids", ch)
		synctest.Wait()
		if !ws.Armed("ids") {
			t.Fatal("ids is not armed after arm")
		}
		if ws.Armed("topics") {
			t.Fatal("arming ids armed topics")
		}
		time.Sleep(time.Hour) // nothing fires on its own
		synctest.Wait()
		if woken(ws) {
			t.Fatal("woken before the watch fired")
		}

		ch <- kazoo.Event{Type: kazoo.EventNodeChildrenChanged}
		synctest.Wait()
		if ws.Armed("ids") {
			t.Error("ids is still armed after its watch fired")
		}
		if !woken(ws) {
			t.Error("no wake-up after the watch fired")
		}
		if woken(ws) {
			t.Error("a second wake-up for one event")
		}
	})
}

// A watch channel closed without an event (the connection closed) disarms
// and wakes too, so the loop reads and re-arms.
func TestSetClosedChannelDisarms(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ws := newTestSet()
		ch := make(chan kazoo.Event)
		ws.Arm("topic/a", ch)
		close(ch)
		synctest.Wait()
		if ws.Armed("topic/a") {
			t.Error("still armed after the watch channel closed")
		}
		if !woken(ws) {
			t.Error("no wake-up after the watch channel closed")
		}
	})
}

// Several watches firing before the loop looks collapse into one wake-up;
// each key is disarmed independently.
func TestSetWakeupsCoalesce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ws := newTestSet()
		keys := []string{"ids", "topic/a", "topic/b", "topics"}
		chans := make(map[string]chan kazoo.Event)
		for _, k := range keys {
			chans[k] = make(chan kazoo.Event, 1)
			ws.Arm(k, chans[k])
		}
		chans["ids"] <- kazoo.Event{}
		chans["topic/b"] <- kazoo.Event{}
		synctest.Wait()
		for k, want := range map[string]bool{"ids": false, "topic/a": true, "topic/b": false, "topics": true} {
			if got := ws.Armed(k); got != want {
				t.Errorf("isArmed(%q) = %v, want %v", k, got, want)
			}
		}
		if !woken(ws) {
			t.Fatal("no wake-up")
		}
		if woken(ws) {
			t.Fatal("two wake-ups: they should coalesce")
		}

		// Re-arming a fired key works as the first time.
		again := make(chan kazoo.Event, 1)
		ws.Arm("ids", again)
		synctest.Wait()
		if !ws.Armed("ids") {
			t.Fatal("ids not armed after re-arming")
		}
		again <- kazoo.Event{}
		synctest.Wait()
		if ws.Armed("ids") || !woken(ws) {
			t.Fatal("re-armed ids did not fire")
		}

		// Release the remaining waiters so the bubble ends clean.
		close(chans["topic/a"])
		close(chans["topics"])
		synctest.Wait()
		if !woken(ws) {
			t.Fatal("no wake-up for the last watches")
		}
	})
}

// A watch channel can stay open after its connection closed: go-zookeeper
// v1.0.4's loop can block before it closes its watch channels. Close ends
// the goroutine waiting on such a channel.
func TestClosedSetLeavesNoGoroutineOnAWatchThatNeverEnds(t *testing.T) {
	before := goleak.IgnoreCurrent()
	ws := newTestSet()
	ws.Arm("ids", make(chan kazoo.Event)) // never fires, never closes
	ws.Close()
	ws.Arm("registration/a", make(chan kazoo.Event)) // armed by a read abandoned before Close
	goleak.VerifyNone(t, before)
	if ws.Armed("ids") || ws.Armed("registration/a") {
		t.Error("a closed set reports a watch armed that nobody waits on")
	}
	if woken(ws) {
		t.Error("a closed set called fired")
	}
}
