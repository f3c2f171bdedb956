package integration

import (
	"maps"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/IBM/sarama"

	"github.com/zkgroup/kafka/internal/testenv"
	"github.com/zkgroup/kafka/kazoo"
)

// history records what one group does with one topic, for the checker of
// history_check_test.go:
//   - deliveries, given to delivered or read from attached ledgers;
//   - every state of each partition's committed offset node, followed with
//     watches from the recorder's own ZooKeeper client;
//   - the offset resets and the faults the test notes;
//   - snapshots of the registered instances and of the owner of every
//     partition, polled every pollEvery from the same client.
//
// Typical use:
//
//	h := newHistory(t, group, topic, partitions) // before the first join
//	h.attach(l)                                  // the ledger readGroup fills
//	h.fault("cut A"); ...; h.faultEnd()
//	rep := h.check(produced, liveIDs, session+time.Second)
//	rep.log(t)
//	rep.assertClean(t)
type history struct {
	t         testing.TB
	topic     string
	kz        *kazoo.Kazoo
	cg        *kazoo.Consumergroup
	pollEvery time.Duration
	stop      chan struct{}
	wg        sync.WaitGroup
	closeOnce sync.Once

	mu      sync.Mutex
	data    historyData
	seq     int
	ledgers []*ledger
}

// historyPoll is how often the recorder reads the owners by default.
const historyPoll = 100 * time.Millisecond

// newHistory starts recording group's commits and owners of topic's
// partitions. Call it before the group's first member joins, so that every
// commit is seen. The recorder stops when the test ends.
func newHistory(t testing.TB, group, topic string, partitions int32) *history {
	t.Helper()
	kz, err := kazoo.NewKazooFromConnectionString(testenv.ZKAddr(), nil)
	if err != nil {
		t.Fatalf("history: %v", err)
	}
	h := &history{
		t: t, topic: topic, kz: kz, cg: kz.Consumergroup(group), pollEvery: historyPoll,
		stop: make(chan struct{}),
		data: historyData{origin: time.Now(), topic: topic, partitions: partitions},
	}
	for p := int32(0); p < partitions; p++ {
		h.wg.Add(1)
		go h.followOffset(p)
	}
	h.wg.Add(1)
	go h.pollOwners()
	t.Cleanup(h.close)
	return h
}

// recordDeliveries is newHistory with the deliveries l records attached:
// the usual start of a test that checks delivery or ownership.
func recordDeliveries(t testing.TB, group, topic string, partitions int32, l *ledger) *history {
	t.Helper()
	h := newHistory(t, group, topic, partitions)
	h.attach(l)
	return h
}

// assert checks the history as checkWith does, logs the report, fails the
// test on every violation and returns the report for the test's own
// assertions on its figures (duplicates, handoffs, deliveries per instance).
func (h *history) assert(exp expectation) *historyReport {
	h.t.Helper()
	rep := h.checkWith(exp)
	rep.log(h.t)
	rep.assertClean(h.t)
	return rep
}

// convergedNow reads the group's registrations and owners once and reports
// whether they satisfy exp, and if not, why.
func (h *history) convergedNow(exp expectation) (bool, string) {
	if exp.assigned {
		h.readLeaders()
	}
	return converged(h.snapshot(), h.meta(), exp)
}

// delivered records that instance was handed m (of any topic: others are
// ignored). Safe for concurrent use, e.g. from a consumer loop.
func (h *history) delivered(instance int, m *sarama.ConsumerMessage) {
	now := time.Now()
	if m.Topic != h.topic {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.seq++
	h.data.deliveries = append(h.data.deliveries, hDelivery{instance: instance, partition: m.Partition, offset: m.Offset, at: now, seq: h.seq})
}

// attach makes the deliveries l records (of this topic; its consumer ids are
// the instances) part of the history: they are read when it is checked.
func (h *history) attach(l *ledger) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.ledgers = append(h.ledgers, l)
}

// fault notes that a fault starts now, hitting the given instances (none:
// the fault is not tied to instances); faultEnd ends it. A fault never ended
// counts as an instant (a crash, say). Convergence is measured from the end
// of the last fault; a duplicate of a message an instance hit by a fault
// delivered counts as caused by the fault.
func (h *history) fault(name string, instances ...int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.data.faults = append(h.data.faults, faultSpan{name: name, start: time.Now(), instances: instances})
}

// faultEnd notes that every fault still going on ends now.
func (h *history) faultEnd() {
	now := time.Now()
	h.mu.Lock()
	defer h.mu.Unlock()
	for i := range h.data.faults {
		if h.data.faults[i].end.IsZero() {
			h.data.faults[i].end = now
		}
	}
}

// endFault notes that the faults named name still going on end now; the
// others go on.
func (h *history) endFault(name string) {
	now := time.Now()
	h.mu.Lock()
	defer h.mu.Unlock()
	for i := range h.data.faults {
		if h.data.faults[i].name == name && h.data.faults[i].end.IsZero() {
			h.data.faults[i].end = now
		}
	}
}

// reset notes that the test is about to reset the committed offset of
// partition (allPartitionsReset: of all of them) to value (-1: it deletes
// the nodes). Call it just before the write, so the decrease is seen after it.
func (h *history) reset(partition int32, value int64) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.data.resets = append(h.data.resets, offsetReset{partition: partition, value: value, at: time.Now()})
}

// instances returns the registered instance ids (nil on error), to learn the
// id of a member that just joined.
func (h *history) instances() []string {
	list, err := h.cg.Instances()
	if err != nil {
		return nil
	}
	var ids []string
	for _, i := range list {
		ids = append(ids, i.ID)
	}
	return ids
}

// check waits for convergence (at most until within after the end of the
// last fault) and checks the history: produced as in expectation, live the
// ids of the instances that must own the partitions at the end, in a
// balanced assignment.
func (h *history) check(produced map[int32]int64, live []string, within time.Duration) *historyReport {
	h.t.Helper()
	return h.checkWith(expectation{produced: produced, live: live, within: within})
}

// checkWith is check with every option of expectation. Recording goes on
// afterwards; a later check sees more.
func (h *history) checkWith(exp expectation) *historyReport {
	h.t.Helper()
	if exp.drain > 0 {
		deadline := time.Now().Add(exp.drain)
		for time.Now().Before(deadline) && missingIn(h.collect(), exp) > 0 {
			time.Sleep(50 * time.Millisecond)
		}
	}
	if exp.within > 0 {
		h.awaitConvergence(exp)
	}
	return checkHistory(h.collect(), exp)
}

// settleSnapshots is how many snapshots in a row must satisfy an
// expectation before awaitConvergence stops polling.
const settleSnapshots = 3

// awaitConvergence polls the owners until settleSnapshots snapshots in a
// row satisfy exp, or until exp.within after the end of the last fault.
func (h *history) awaitConvergence(exp expectation) {
	_, end := lastFault(h.meta())
	deadline := end.Add(exp.within)
	for good := 0; good < settleSnapshots; {
		if exp.assigned {
			h.readLeaders()
		}
		s := h.snapshot()
		if ok, _ := converged(s, h.meta(), exp); ok {
			good++
		} else {
			good = 0
		}
		if time.Now().After(deadline) {
			return
		}
		time.Sleep(h.pollEvery / 2)
	}
}

// meta returns what convergence needs of the history: origin, partition
// count, faults and leaders.
func (h *history) meta() *historyData {
	h.mu.Lock()
	defer h.mu.Unlock()
	return &historyData{origin: h.data.origin, topic: h.data.topic, partitions: h.data.partitions, faults: slices.Clone(h.data.faults), leaders: maps.Clone(h.data.leaders)}
}

// collect returns a copy of what was recorded, with the deliveries of the
// attached ledgers.
func (h *history) collect() *historyData {
	h.mu.Lock()
	d := h.data
	d.deliveries = slices.Clone(d.deliveries)
	d.writes = slices.Clone(d.writes)
	d.resets = slices.Clone(d.resets)
	d.faults = slices.Clone(d.faults)
	d.snapshots = slices.Clone(d.snapshots)
	d.leaders = maps.Clone(d.leaders)
	ledgers := slices.Clone(h.ledgers)
	seq := h.seq
	h.mu.Unlock()
	for _, l := range ledgers {
		for _, dl := range l.snapshot() {
			if dl.topic != h.topic {
				continue
			}
			seq++
			d.deliveries = append(d.deliveries, hDelivery{instance: dl.consumer, partition: dl.partition, offset: dl.offset, at: dl.at, seq: seq})
		}
	}
	return &d
}

// followOffset records every state of partition p's offset node it sees.
func (h *history) followOffset(p int32) {
	defer h.wg.Done()
	prevValue, prevVersion := int64(-2), int32(-2) // nothing seen yet
	for {
		value, version, changed, err := h.cg.WatchOffset(h.topic, p)
		if err == nil && (value != prevValue || version != prevVersion) {
			prevValue, prevVersion = value, version
			h.mu.Lock()
			h.data.writes = append(h.data.writes, offsetWrite{partition: p, value: value, version: version, at: time.Now()})
			h.mu.Unlock()
		}
		var retry <-chan time.Time
		if changed == nil { // no watch set: read again shortly
			retry = time.After(50 * time.Millisecond)
		}
		select {
		case <-changed:
		case <-retry:
		case <-h.stop:
			return
		}
	}
}

// pollOwners takes an ownership snapshot every pollEvery.
func (h *history) pollOwners() {
	defer h.wg.Done()
	tick := time.NewTicker(h.pollEvery)
	defer tick.Stop()
	for {
		h.snapshot()
		select {
		case <-tick.C:
		case <-h.stop:
			return
		}
	}
}

// snapshot reads the registered ids and every partition's owner, and
// records the result stamped with the time the reads ended.
func (h *history) snapshot() ownerSnapshot {
	s := ownerSnapshot{owners: make(map[int32]string)}
	list, err := h.cg.Instances()
	if err != nil {
		s.err = err
	}
	for _, i := range list {
		s.ids = append(s.ids, i.ID)
	}
	for p := int32(0); p < h.data.partitions && s.err == nil; p++ {
		o, err := h.cg.PartitionOwner(h.topic, p)
		switch {
		case err != nil:
			s.err = err
		case o != nil:
			s.owners[p] = o.ID
		}
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	s.at = time.Now()
	h.data.snapshots = append(h.data.snapshots, s)
	return s
}

// readLeaders records the current leader of every partition, for an
// expectation of the default assignment.
func (h *history) readLeaders() {
	parts, err := h.kz.Topic(h.topic).Partitions()
	if err != nil {
		return
	}
	leaders := make(map[int32]int32)
	for _, p := range parts {
		if l, err := p.Leader(); err == nil {
			leaders[p.ID] = l
		}
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.data.leaders = leaders
}

// close stops recording.
func (h *history) close() {
	h.closeOnce.Do(func() {
		close(h.stop)
		_ = h.kz.Close()
		h.wg.Wait()
	})
}
