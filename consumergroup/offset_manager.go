package consumergroup

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/IBM/sarama"

	"github.com/zkgroup/kafka/internal/offsets"
	"github.com/zkgroup/kafka/kazoo"
)

// OffsetManager is upstream's interface to the group's offset store.
type OffsetManager interface {
	// InitializePartition starts tracking a partition and returns its stored
	// next offset (-1 if none).
	InitializePartition(topic string, partition int32) (int64, error)

	// MarkAsProcessed marks offset of the partition as processed; it returns
	// whether the mark was accepted (marks only move forward).
	MarkAsProcessed(topic string, partition int32, offset int64) bool

	// Flush commits the marked offsets of every tracked partition now.
	Flush() error

	// FinalizePartition waits up to timeout for lastOffset to be marked,
	// commits, and stops tracking the partition.
	FinalizePartition(topic string, partition int32, lastOffset int64, timeout time.Duration) error

	// Close stops the commit loop after a last commit; it returns
	// UncleanClose if partitions were still tracked.
	Close() error
}

// OffsetManagerConfig configures the offset manager.
type OffsetManagerConfig struct {
	// CommitInterval is the period of the commit loop; 0 disables it (commits
	// then happen on Flush and FinalizePartition only). Default 10 s.
	CommitInterval time.Duration
	// VerboseLogging logs every commit at debug level. Default false.
	VerboseLogging bool
}

// NewOffsetManagerConfig returns an OffsetManagerConfig with the defaults.
func NewOffsetManagerConfig() *OffsetManagerConfig {
	return &OffsetManagerConfig{CommitInterval: DefaultCommitInterval}
}

// NewZookeeperOffsetManager returns the offset manager cg uses: offsets in
// ZooKeeper as plain decimals of the next offset, committed every
// CommitInterval. Partitions claimed by the group's partition consumers are
// committed fenced by their claim's epoch; partitions started through
// InitializePartition use plain (unfenced) commits, as upstream did.
func NewZookeeperOffsetManager(cg *ConsumerGroup, config *OffsetManagerConfig) OffsetManager {
	return newZookeeperOffsetManager(cg, config)
}

// ownedOffsets is the offset state of one partition this instance consumes.
type ownedOffsets struct {
	tp      topicPartition
	tracker *offsets.Tracker
	claim   *kazoo.PartitionClaim // nil: unfenced (InitializePartition)
	worker  *partitionWorker      // nil: no worker to seek or stop

	commitMu sync.Mutex      // serialises commits and restarts of this partition
	version  int32           // version of the offset node we last read or wrote; -1: none
	inDoubt  offsets.InDoubt // commits whose reply was lost; guarded by commitMu

	// maxOffered is the highest offset offered to the application from the
	// current position (-1: none yet); a mark above it cannot be genuine (it
	// comes from before a seek) and is ignored. Not enforced without a worker.
	maxOffered atomic.Int64
	redelivery offsets.Redelivery // after a backward seek: marks must name the redelivered message
	seeking    atomic.Bool        // a restart is pending: ignore marks, do not commit
	// recalls counts the starts and ends of recalls: odd while the worker
	// takes back its buffer (do not commit). A commit reads it before and
	// after the position, and commits only if no recall ran in between.
	recalls atomic.Uint64
	lost    atomic.Bool // the epoch moved: never commit again
	kafka   kafkaState  // what Kafka holds, with Offsets.Storage kafka or dual
	pause   userPause   // the application's pause of this claim
}

// offer records that offset is about to be handed to the application: from
// then on a mark of it is genuine.
func (o *ownedOffsets) offer(offset int64) {
	if offset > o.maxOffered.Load() {
		o.maxOffered.Store(offset)
	}
}

// delivered records that the application took offset: Drain waits for it.
func (o *ownedOffsets) delivered(offset int64) {
	o.tracker.Delivered(offset)
}

// mark marks the message m at offset (m nil: a mark by offset only).
func (o *ownedOffsets) mark(m *sarama.ConsumerMessage, offset int64) bool {
	gen := o.tracker.Generation() // before the checks: a restart after them refuses the mark
	if o.seeking.Load() || o.lost.Load() {
		return false
	}
	if o.worker != nil && offset > o.maxOffered.Load() {
		return false
	}
	if !o.redelivery.Allows(m, offset) {
		return false
	}
	return o.tracker.MarkOffsetAt(offset, gen)
}

// rewind moves the mark back to next, the next offset to consume (a
// session's ResetOffset): committed at the next commit although lower than
// what is stored. Refused while a restart is pending or after the claim
// was lost, and for a next above the current mark.
func (o *ownedOffsets) rewind(next int64) bool {
	if o.seeking.Load() || o.lost.Load() {
		return false
	}
	return o.tracker.Rewind(next)
}

// restart moves the partition to offset (negative: none stored, start at
// Offsets.Initial), dropping pending marks. Called by the worker.
func (o *ownedOffsets) restart(offset int64) {
	o.restartWith(func() int64 { o.tracker.Reset(offset); return offset })
	o.seeking.Store(false)
}

// restartWith moves the partition's position with move, which resets the
// tracker (a new generation) and returns the new position, and opens the
// redelivery window from there to the highest offset offered so far. It
// holds the commit lock, so no commit runs in between, and returns the
// new position.
func (o *ownedOffsets) restartWith(move func() int64) int64 {
	o.commitMu.Lock()
	defer o.commitMu.Unlock()
	far := o.maxOffered.Load()
	to := move()
	o.redelivery.Restart(to, far)
	o.maxOffered.Store(-1)
	return to
}

// beginRecall stops commits of o until endRecall. It does not wait for a
// commit in flight (one may hang while ZooKeeper is silent, which is when
// the worker must empty its buffer at once): a commit reads the position
// between two reads of o.recalls (see pendingOutsideRecall), so one that
// goes ahead read its position while no recall ran, and stores only marks
// of messages the application got before one began.
func (o *ownedOffsets) beginRecall() { o.recalls.Add(1) }

func (o *ownedOffsets) endRecall() { o.recalls.Add(1) }

// pendingOutsideRecall returns the tracker's pending position, and ok
// false when a recall ran during any part of the read: a recall that
// began and ended meanwhile may have capped the position below what was
// read.
func (o *ownedOffsets) pendingOutsideRecall() (next int64, dirty, ok bool) {
	before := o.recalls.Load()
	next, dirty = o.tracker.Pending()
	return next, dirty, before%2 == 0 && o.recalls.Load() == before
}

// restartAtMark restarts the partition at its marked position, but not
// above below, the lowest offset taken back from the buffer (negative:
// none): every message delivered and not marked yet is delivered again,
// and marks of messages delivered before are refused (see
// offsets.Redelivery). Nothing stored moves. It returns the position,
// where the worker fetches from next. Called by the worker between
// beginRecall and endRecall.
func (o *ownedOffsets) restartAtMark(below int64) int64 {
	return o.restartWith(func() int64 { return o.tracker.RestartAtMark(below) })
}

type zookeeperOffsetManager struct {
	cg          *ConsumerGroup
	config      OffsetManagerConfig
	concurrency int           // commits in flight at once; 0: maxConcurrentCommits
	storage     OffsetStorage // Offsets.Storage; "" acts as zookeeper

	mu    sync.RWMutex
	parts map[topicPartition]*ownedOffsets
	// view holds what parts holds, for the per-message lookups of marks:
	// they read it without taking mu, whose reader count every mark would
	// otherwise write. Written under mu.
	view markView

	closing   chan struct{}
	closed    chan struct{}
	closeOnce sync.Once
}

func newZookeeperOffsetManager(cg *ConsumerGroup, config *OffsetManagerConfig) *zookeeperOffsetManager {
	if config == nil {
		config = NewOffsetManagerConfig()
	}
	om := &zookeeperOffsetManager{
		cg:      cg,
		config:  *config,
		parts:   make(map[topicPartition]*ownedOffsets),
		closing: make(chan struct{}),
		closed:  make(chan struct{}),
	}
	if cg != nil && cg.config != nil {
		om.storage = cg.config.Offsets.Storage
	}
	go om.commitLoop()
	return om
}

// adopt starts tracking a partition whose stored offset node holds next at
// version (-1, -1: no node). c and w are nil for a partition started through
// InitializePartition: unfenced commits, nobody to seek or stop.
func (om *zookeeperOffsetManager) adopt(tp topicPartition, c *kazoo.PartitionClaim, next int64, version int32, w *partitionWorker) *ownedOffsets {
	o := &ownedOffsets{tp: tp, tracker: offsets.NewTracker(next), claim: c, worker: w, version: version}
	o.maxOffered.Store(-1)
	o.kafka.next.Store(-1)
	om.mu.Lock()
	om.parts[tp] = o
	om.view.set(tp, o)
	om.mu.Unlock()
	return o
}

// lookup returns the tracked partition tp, or nil, without locking.
func (om *zookeeperOffsetManager) lookup(tp topicPartition) *ownedOffsets {
	return om.view.get(tp)
}

// drop stops tracking o without committing.
func (om *zookeeperOffsetManager) drop(tp topicPartition, o *ownedOffsets) {
	om.mu.Lock()
	if om.parts[tp] == o {
		delete(om.parts, tp)
		om.view.set(tp, nil)
	}
	om.mu.Unlock()
}

// finalize waits up to timeout for every delivered message of o to be
// marked, commits, and stops tracking o: FinalizePartition, for partitions
// without a worker. A worker drains and commits in states of its own (see
// worker_lifecycle.go), with finalCommit.
func (om *zookeeperOffsetManager) finalize(o *ownedOffsets, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	drainErr := o.tracker.Drain(ctx)
	cancel()
	err := om.finalCommit(o)
	if drainErr != nil {
		return errors.Join(drainErr, err)
	}
	return err
}

// finalCommit commits what o has marked and stops tracking o. It retries
// transient errors for a short, bounded time. A claim found lost is an
// error wrapping kazoo.ErrClaimLost (and o.lost is set); nothing is written
// for a partition whose stored offset changed underneath (a seek pending:
// the stored offset stands).
func (om *zookeeperOffsetManager) finalCommit(o *ownedOffsets) error {
	defer om.drop(o.tp, o)
	var err error
	for attempt := 0; attempt < 5; attempt++ {
		if err = om.commit(o); err == nil || !retryableCommit(err) {
			break
		}
		time.Sleep(time.Duration(attempt+1) * 100 * time.Millisecond)
	}
	return err
}

// commit writes o's marked offset if it moved, fenced by o's claim, to the
// stores Offsets.Storage names (see commitKafka for Kafka's). It resolves
// the two refusals of ZooKeeper itself: a moved epoch marks the partition
// lost and stops its worker; a conflict adopts the stored offset, drops
// pending marks, seeks the worker and reports an *OffsetConflictError.
func (om *zookeeperOffsetManager) commit(o *ownedOffsets) error {
	o.commitMu.Lock()
	defer o.commitMu.Unlock()
	next, dirty, ok := o.pendingOutsideRecall() // see beginRecall
	if !ok || o.seeking.Load() || o.lost.Load() {
		return nil
	}
	storage := om.storage
	if !storage.usesZookeeper() {
		if !dirty {
			// Written again only when kafkaRefresh has passed.
			return om.commitKafka(o, o.tracker.CommittedOffset(), false)
		}
		return om.commitKafka(o, next, true)
	}
	if dirty {
		if err := om.commitZookeeper(o, next); err != nil {
			return err
		}
	}
	if storage == OffsetStorageDual {
		// Kafka follows what ZooKeeper holds, catching up after a failure.
		return om.commitKafka(o, o.tracker.CommittedOffset(), false)
	}
	return nil
}

// commitZookeeper commits next, which is pending, to ZooKeeper.
func (om *zookeeperOffsetManager) commitZookeeper(o *ownedOffsets, next int64) error {
	if o.claim == nil {
		if err := om.cg.group.CommitOffset(o.tp.Topic, o.tp.Partition, next); err != nil {
			return newPartitionError(o.tp.Topic, o.tp.Partition, err)
		}
		o.tracker.Committed(next)
		return nil
	}
	for {
		again, err := om.commitFenced(o, next)
		if !again {
			return err
		}
		var dirty, ok bool
		if next, dirty, ok = o.pendingOutsideRecall(); !dirty || !ok {
			return nil
		}
	}
}

// commitFenced makes one fenced commit of next. It returns again when a
// write in doubt turned out to be ours: the version is known now, and what
// was marked since may still need committing.
// See docs/in-doubt-commits.md.
func (om *zookeeperOffsetManager) commitFenced(o *ownedOffsets, next int64) (again bool, err error) {
	m := om.cg.met()
	sent := time.Now()
	version, err := om.cg.instance.CommitOffsetFenced(o.claim, next, o.version)
	var conflict *kazoo.OffsetConflictError
	switch {
	case err == nil:
		m.commits.Inc(1)
		m.commitLatency.Update(ms(time.Since(sent)))
		if o.worker != nil {
			if hwm := o.worker.hwm.Load(); hwm > 0 {
				m.lag(o.tp).Update(max(hwm-next, 0))
			}
		}
		o.version = version
		o.inDoubt.Clear()
		o.tracker.Committed(next)
		if om.config.VerboseLogging {
			om.cg.log.Debug("committed", "topic", o.tp.Topic, "partition", o.tp.Partition, "next", next)
		}
		return false, nil
	case errors.Is(err, kazoo.ErrClaimLost):
		o.markLost()
		return false, newPartitionError(o.tp.Topic, o.tp.Partition,
			fmt.Errorf("commit of offset %d refused, partition lost to another claim: %w", next, err))
	case errors.As(err, &conflict) && o.inDoubt.Ours(conflict.Stored, conflict.Version):
		// An earlier commit whose reply was lost was applied after all.
		om.cg.log.Debug("a commit whose reply was lost was applied", "topic", o.tp.Topic,
			"partition", o.tp.Partition, "next", conflict.Stored, "version", conflict.Version)
		o.adoptOwnWrite(conflict)
		return true, nil
	case errors.As(err, &conflict):
		return false, om.adoptConflict(o, next, conflict, err)
	default:
		// No answer: the write may or may not have been applied.
		o.inDoubt.Add(next, o.version)
		return false, newPartitionError(o.tp.Topic, o.tp.Partition, fmt.Errorf("commit offset %d: %w", next, err))
	}
}

// rewindAsReset stores next, below the stored offset, the way a reset
// does (see kazoo's RewindOffsetFenced): fenced by o's claim, with an
// epoch bump that ends the claim, so the worker stops and claims again,
// and nothing under the old epoch commits any more. ZooKeeper storage
// only (Kafka knows no epochs): it reports whether it applies.
//
// It writes nothing while a seek is pending (a stored offset adopted from
// a conflict wins: errSeekPending) or after the claim was lost, and it
// recognises a commit of ours whose reply was lost, as commit does.
func (om *zookeeperOffsetManager) rewindAsReset(o *ownedOffsets, next int64) (applies bool, err error) {
	if om.storage != OffsetStorageZookeeper && om.storage != "" || o.claim == nil {
		return false, nil
	}
	o.commitMu.Lock()
	defer o.commitMu.Unlock()
	for range 3 {
		switch {
		case o.lost.Load():
			return true, newPartitionError(o.tp.Topic, o.tp.Partition, fmt.Errorf("rewind to %d: %w", next, kazoo.ErrClaimLost))
		case o.seeking.Load():
			return true, errSeekPending
		}
		err = om.cg.instance.RewindOffsetFenced(o.claim, next, o.version)
		var conflict *kazoo.OffsetConflictError
		switch {
		case err == nil, errors.Is(err, kazoo.ErrClaimLost):
			o.markLost() // our own reset ended the claim, or someone else did
			if err != nil {
				return true, newPartitionError(o.tp.Topic, o.tp.Partition, fmt.Errorf("rewind to %d refused, partition lost to another claim: %w", next, err))
			}
			return true, nil
		case errors.As(err, &conflict) && o.inDoubt.Ours(conflict.Stored, conflict.Version):
			// A commit of ours whose reply was lost was applied after all.
			o.adoptOwnWrite(conflict)
			continue
		case errors.As(err, &conflict):
			om.adoptConflict(o, next, conflict, err)
			return true, errSeekPending
		default:
			return true, newPartitionError(o.tp.Topic, o.tp.Partition, fmt.Errorf("rewind to %d: %w", next, err))
		}
	}
	return true, newPartitionError(o.tp.Topic, o.tp.Partition, fmt.Errorf("rewind to %d: %w", next, kazoo.ErrClaimContended))
}

// markLost records that o's claim ended (the epoch moved) and tells its
// worker. Called with o.commitMu held.
func (o *ownedOffsets) markLost() {
	o.lost.Store(true)
	if o.worker != nil {
		o.worker.lost()
	}
}

// adoptOwnWrite takes a refused write's conflict as the applied write of
// ours in doubt it matches (see docs/in-doubt-commits.md). Called with
// o.commitMu held.
func (o *ownedOffsets) adoptOwnWrite(c *kazoo.OffsetConflictError) {
	o.version = c.Version
	o.inDoubt.Clear()
	o.tracker.Committed(c.Stored)
}

// adoptConflict adopts the offset stored underneath (an operator's write)
// in place of next: pending marks are dropped and the worker seeks there
// (without a worker the tracker restarts there), and the conflict is
// counted, logged and reported; it returns the report. Called with
// o.commitMu held, by whichever write found the conflict.
func (om *zookeeperOffsetManager) adoptConflict(o *ownedOffsets, next int64, c *kazoo.OffsetConflictError, err error) *OffsetConflictError {
	om.cg.met().conflicts.Inc(1)
	o.version = c.Version
	o.inDoubt.Clear()
	report := &OffsetConflictError{Topic: o.tp.Topic, Partition: o.tp.Partition, Pending: next, Stored: c.Stored, Err: err}
	if o.worker != nil {
		o.seeking.Store(true)
		o.worker.seek(c.Stored)
	} else {
		o.tracker.Reset(c.Stored)
	}
	om.cg.log.Warn("offset changed underneath; adopting it", "topic", o.tp.Topic, "partition", o.tp.Partition,
		"stored", c.Stored, "pending", next)
	om.cg.report(newPartitionError(o.tp.Topic, o.tp.Partition, report))
	return report
}

// errSeekPending: a seek to an offset stored underneath is pending; the
// worker takes it before it fetches.
var errSeekPending = errors.New("consumergroup: a seek to the stored offset is pending")

func (om *zookeeperOffsetManager) snapshot() []*ownedOffsets {
	om.mu.Lock()
	defer om.mu.Unlock()
	out := make([]*ownedOffsets, 0, len(om.parts))
	for _, o := range om.parts {
		out = append(out, o)
	}
	return out
}

// commitAll commits every tracked partition and joins the errors.
func (om *zookeeperOffsetManager) commitAll() error {
	return errors.Join(om.commitEach()...)
}

// maxConcurrentCommits bounds how many partitions commit at once.
const maxConcurrentCommits = 128

// commitEach commits every tracked partition that has something to commit
// and returns each failure, one *PartitionError (or *OffsetConflictError)
// per partition. The commits run concurrently, up to om.concurrency at a
// time: ZooKeeper pipelines them on the one session, so a round costs about
// one round trip instead of one per partition. Each partition's own commits
// stay serialised by its commit mutex.
func (om *zookeeperOffsetManager) commitEach() []error {
	limit := om.concurrency
	if limit <= 0 {
		limit = maxConcurrentCommits
	}
	var (
		mu   sync.Mutex
		errs []error
		wg   sync.WaitGroup
		sem  = make(chan struct{}, limit)
	)
	for _, o := range om.snapshot() {
		if !om.hasWork(o) {
			continue
		}
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			if err := om.commit(o); err != nil {
				mu.Lock()
				errs = append(errs, err)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	return errs
}

func (om *zookeeperOffsetManager) commitLoop() {
	defer close(om.closed)
	if om.config.CommitInterval <= 0 {
		<-om.closing
		return
	}
	t := time.NewTicker(om.config.CommitInterval)
	defer t.Stop()
	for {
		select {
		case <-om.closing:
			return
		case <-t.C:
			for _, err := range om.commitEach() {
				var conflict *OffsetConflictError
				if !errors.As(err, &conflict) { // conflicts are reported by commit
					om.cg.report(err)
				}
			}
		}
	}
}

// InitializePartition implements OffsetManager for callers outside the
// group's own partition consumers: unfenced tracking, as upstream.
func (om *zookeeperOffsetManager) InitializePartition(topic string, partition int32) (int64, error) {
	st, err := om.cg.readStored(topicPartition{topic, partition})
	if err != nil {
		return -1, err
	}
	o := om.adopt(topicPartition{topic, partition}, nil, st.start(), st.zkVersion, nil)
	o.kafka.next.Store(st.kafkaNext)
	return st.start(), nil
}

// MarkAsProcessed implements OffsetManager.
func (om *zookeeperOffsetManager) MarkAsProcessed(topic string, partition int32, offset int64) bool {
	o := om.lookup(topicPartition{topic, partition})
	if o == nil {
		return false
	}
	return o.mark(nil, offset)
}

// markMessage is MarkAsProcessed for a message the group delivered: inside
// a redelivery window it counts only for the message redelivered there.
func (om *zookeeperOffsetManager) markMessage(m *sarama.ConsumerMessage) bool {
	o := om.lookup(topicPartition{m.Topic, m.Partition})
	if o == nil {
		return false
	}
	return o.mark(m, m.Offset)
}

// resetOffset rewinds the mark of a tracked partition to next (see
// ownedOffsets.rewind).
func (om *zookeeperOffsetManager) resetOffset(topic string, partition int32, next int64) bool {
	om.mu.RLock()
	o := om.parts[topicPartition{topic, partition}]
	om.mu.RUnlock()
	if o == nil {
		return false
	}
	return o.rewind(next)
}

// Flush implements OffsetManager.
func (om *zookeeperOffsetManager) Flush() error {
	return om.commitAll()
}

// FinalizePartition implements OffsetManager.
func (om *zookeeperOffsetManager) FinalizePartition(topic string, partition int32, lastOffset int64, timeout time.Duration) error {
	om.mu.Lock()
	o := om.parts[topicPartition{topic, partition}]
	om.mu.Unlock()
	if o == nil {
		return nil
	}
	if lastOffset >= 0 {
		o.tracker.Delivered(lastOffset)
	}
	return om.finalize(o, timeout)
}

// Close implements OffsetManager.
func (om *zookeeperOffsetManager) Close() error {
	var err error
	om.closeOnce.Do(func() {
		close(om.closing)
		<-om.closed
		err = om.commitAll()
		om.mu.Lock()
		left := len(om.parts)
		om.mu.Unlock()
		if left > 0 {
			err = errors.Join(fmt.Errorf("%w: %d partitions still tracked", UncleanClose, left), err)
		}
	})
	return err
}
