package coord

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/zkgroup/kafka/kazoo"
)

// A registration read with its watch armed is not read again until that
// watch fires or the resync comes: a join makes each member read the
// joiner's registration alone, not every member's again, and a changed
// registration (its watch fired) is read afresh and reaches the assignment
// at once.
func TestLoopReadsARegistrationAgainOnlyAfterItsWatchFired(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		zk := newWatchingZooKeeper()
		_ = zk.Register() // b, white list t.*
		sub := func(topic string) *kazoo.Registration {
			return &kazoo.Registration{Subscription: map[string]int{topic: 1}}
		}
		zk.set("a", sub("t"))
		fw := &fakeWorkers{}
		stop, done := startLoop(t, Config{Topics: []string{"t"}}, Deps{
			ZooKeeper: zk,
			Topics:    fixedTopics{"t": {{ID: 0}, {ID: 1}, {ID: 2}, {ID: 3}}},
			Workers:   fw,
		})
		want := func(step string, tps ...string) {
			t.Helper()
			wantRunning(t, fw, step, tps...)
		}
		reads := func(step string, id string, n int) {
			t.Helper()
			if got := zk.regReads(id); got != n {
				t.Fatalf("%s: %s's registration read %d times, want %d", step, id, got, n)
			}
		}
		want("a and b", "t/2", "t/3")
		reads("a and b", "a", 1)

		zk.set("c", sub("t")) // c joins: a, b, c share t
		zk.fire("ids")
		want("c joined", "t/2")
		reads("c joined", "a", 1)
		reads("c joined", "b", 1)
		reads("c joined", "c", 1)

		zk.set("a", sub("x")) // a's subscription changes: b and c share t
		zk.fire("registration/a")
		want("a left t", "t/0", "t/1")
		reads("a left t", "a", 2)
		reads("a left t", "c", 1)

		// The resync reads every registration again, under the watches
		// armed already, in case one never fires.
		armed := zk.armedCount("registration/c")
		time.Sleep(resyncInterval)
		want("resync", "t/0", "t/1")
		reads("resync", "c", 2)
		if n := zk.armedCount("registration/c"); n != armed {
			t.Fatalf("the resync armed %d more watches on c's registration, want none", n-armed)
		}

		close(stop)
		<-done
		zk.expire()
		synctest.Wait()
	})
}
