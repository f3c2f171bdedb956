package kazoo

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"go.uber.org/goleak"
)

// WatchClaim's merged channel is fed by a goroutine that waits on the two
// watches. go-zookeeper v1.0.4's loop can block after Close before it
// closes its watch channels (docs/shutdown.md): the goroutine then ends
// with the client's Close instead, handing out EventNotWatching.
func TestWatchClaimChannelEndsWithItsClient(t *testing.T) {
	before := goleak.IgnoreCurrent()
	closed, closeClient := context.WithCancel(context.Background())
	out := firstEvent(closed.Done(), make(chan Event), make(chan Event)) // two watches that never end
	closeClient()
	var ev Event
	var ok bool
	select {
	case ev, ok = <-out:
	case <-time.After(5 * time.Second):
		t.Fatal("no event 5 s after Close: the goroutine waits on the two watches")
	}
	if !ok || ev.Type != EventNotWatching || !errors.Is(ev.Err, zk.ErrClosing) {
		t.Errorf("after Close the channel gave %+v (open %v), want EventNotWatching with zk.ErrClosing", ev, ok)
	}
	if _, ok := <-out; ok {
		t.Error("the channel stayed open after its event")
	}
	goleak.VerifyNone(t, before)
}
