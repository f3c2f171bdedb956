package zkwatch

import (
	"testing"
	"testing/synctest"

	"github.com/zkgroup/kafka/kazoo"
)

// fakeNode is one znode for KnownRead: its value, how often it was read
// with and without a watch, and its outstanding watch.
type fakeNode struct {
	value, reads, watchReads int
	watch                    chan kazoo.Event
}

func (n *fakeNode) read() (int, error) {
	n.reads++
	return n.value, nil
}

func (n *fakeNode) watchRead() (int, <-chan kazoo.Event, error) {
	n.watchReads++
	n.watch = make(chan kazoo.Event, 1)
	return n.value, n.watch, nil
}

// change sets the value and fires the watch, as ZooKeeper does.
func (n *fakeNode) change(v int) {
	n.value = v
	n.watch <- kazoo.Event{Type: kazoo.EventNodeDataChanged}
}

// KnownRead asks ZooKeeper once per watch; after its watch fired it asks
// again with a new watch; after Forget it asks again under the same watch
// and knows that value until the watch fires.
func TestKnownReadAsksAgainOnlyAfterAChangeOrForget(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ws := newTestSet()
		n := &fakeNode{value: 1}
		get := func(want int) {
			t.Helper()
			if v, err := KnownRead(ws.Set, "k", n.read, n.watchRead); err != nil || v != want {
				t.Fatalf("KnownRead = %d, %v; want %d", v, err, want)
			}
		}
		get(1)
		get(1)
		if n.watchReads != 1 || n.reads != 0 {
			t.Fatalf("two reads of an unchanged node asked %d times with a watch, %d without; want once with", n.watchReads, n.reads)
		}

		n.change(2)
		synctest.Wait()
		get(2)
		if n.watchReads != 2 {
			t.Fatalf("after the watch fired: %d reads with a watch, want 2", n.watchReads)
		}

		ws.Forget()
		n.value = 3 // changed unseen: its watch never fired
		get(3)
		get(3)
		if n.watchReads != 2 || n.reads != 1 {
			t.Fatalf("after Forget: %d reads with a watch, %d without; want 2 and 1", n.watchReads, n.reads)
		}

		n.change(4)
		synctest.Wait()
		get(4)
		if n.watchReads != 3 {
			t.Fatalf("after the watch fired again: %d reads with a watch, want 3", n.watchReads)
		}
		close(n.watch)
		synctest.Wait()
	})
}

// A value read under a watch that has fired since, or under an earlier
// arming of the key, is not kept.
func TestKnowIfArmedKeepsOnlyTheCurrentArmingsValue(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ws := newTestSet()
		first := make(chan kazoo.Event, 1)
		ws.Arm("k", first)
		n, _ := ws.arming("k")
		first <- kazoo.Event{Type: kazoo.EventNodeDataChanged}
		synctest.Wait()
		ws.knowIfArmed("k", n, "read under the fired watch")
		if v, ok := ws.lookup("k"); ok {
			t.Fatalf("known %v after its watch fired", v)
		}

		second := make(chan kazoo.Event, 1)
		ws.Arm("k", second)
		ws.knowIfArmed("k", n, "read under the first arming")
		if v, ok := ws.lookup("k"); ok {
			t.Fatalf("known %v under the second arming, read under the first", v)
		}
		close(second)
		synctest.Wait()
	})
}

// ForgetPrefix drops the values of the keys it names alone: they are read
// again, the others stay known.
func TestForgetPrefixForgetsOnlyTheKeysItNames(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ws := newTestSet()
		list, leader := &fakeNode{value: 1}, &fakeNode{value: 7}
		for range 2 {
			_, _ = KnownRead(ws.Set, "topic/t", list.read, list.watchRead)
			_, _ = KnownRead(ws.Set, "state/t/0", leader.read, leader.watchRead)
		}
		ws.ForgetPrefix("topic/")
		list.value = 2 // changed unseen: its watch never fired
		if v, _ := KnownRead(ws.Set, "topic/t", list.read, list.watchRead); v != 2 || list.reads != 1 {
			t.Fatalf("forgotten key: KnownRead = %d after %d reads without a watch, want 2 after 1", v, list.reads)
		}
		if v, _ := KnownRead(ws.Set, "state/t/0", leader.read, leader.watchRead); v != 7 || leader.reads+leader.watchReads != 1 {
			t.Fatalf("key not named: KnownRead = %d after %d reads, want 7 after the first", v, leader.reads+leader.watchReads)
		}
		close(list.watch)
		close(leader.watch)
		synctest.Wait()
	})
}
