package coord

import (
	"fmt"
	"testing"
	"testing/synctest"
	"time"

	"github.com/zkgroup/kafka/kazoo"
)

// A fenced instance whose releases failed for good deletes the owner nodes
// they left, retrying every RetryCooldown until none is left: the instance
// that holds its static id now waits for those nodes, which would
// otherwise stay until Close ends the session.
func TestFencedInstanceSweepsTheOwnerNodesItLeft(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		res := &fakeReservations{nodes: map[string]*kazoo.StaticMember{}}
		workers := &exitingWorkers{fakeWorkers: fakeWorkers{holdNodes: true, failSweeps: 2}}
		s := startStaticLoopOn(t, newGroupZooKeeper(), res, func() error {
			return fmt.Errorf("register: %w", kazoo.ErrFencedInstanceID)
		}, workers)
		synctest.Wait()
		s.zk.mu.Lock()
		delete(s.zk.regs, "b") // taken over: registering again is refused
		s.zk.mu.Unlock()
		time.Sleep(resyncInterval)
		synctest.Wait()
		if got := s.running(); len(got) > 0 {
			t.Errorf("a fenced instance still runs %v", got)
		}
		time.Sleep(10 * time.Second) // RetryCooldown is 1 s
		synctest.Wait()
		workers.mu.Lock()
		swept := map[int32]int{}
		for _, w := range workers.swept {
			swept[w.tp.Partition]++
		}
		n := len(workers.swept)
		workers.mu.Unlock()
		if n != 5 || len(swept) != 3 {
			t.Errorf("swept %v (%d sweeps), want partitions 3, 4 and 5 until each succeeded: 5 sweeps, 2 of them failed", swept, n)
		}
		s.close()
	})
}
