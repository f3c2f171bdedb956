package offsets

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/IBM/sarama"
	"github.com/cenkalti/backoff/v4"

	"github.com/zkgroup/kafka/kazoo"
)

// Committer tracks the partitions this instance consumes and commits what
// their owners marked to the Store, periodically and on demand: fenced by
// each partition's claim, resolving conflicts and commits in doubt. It
// never asks which storage is used; the Store knows.
type Committer struct {
	env   *env
	store Store

	mu    sync.RWMutex
	parts map[TopicPartition]*Partition
	// view holds what parts holds, for the per-message lookups of marks:
	// they read it without taking mu, whose reader count every mark would
	// otherwise write. Written under mu.
	view markView
	// offeredBefore is, per partition, the highest offset any earlier
	// claim of it here offered: each new claim's claimDeliveries starts
	// from it. Written under mu.
	offeredBefore map[TopicPartition]int64

	started   bool
	closing   chan struct{}
	closed    chan struct{}
	closeOnce sync.Once
}

// New returns a Committer storing offsets where cfg.Kind says; Start
// starts its commit loop.
func New(cfg Config, deps Deps) *Committer {
	c := &Committer{
		env:     &env{cfg: cfg, deps: deps},
		parts:   make(map[TopicPartition]*Partition),
		closing: make(chan struct{}),
		closed:  make(chan struct{}),
	}
	c.store = newStore(c.env, c.ownedByTopic)
	return c
}

// Start starts the commit loop, which Close stops.
func (c *Committer) Start() {
	c.started = true
	go c.commitLoop()
}

// Store returns the store offsets are read from and committed to.
func (c *Committer) Store() Store { return c.store }

// Adopt starts tracking a partition whose stores hold st. claim and owner
// are nil for a partition started through InitializePartition: unfenced
// commits, nobody to seek or stop.
func (c *Committer) Adopt(tp TopicPartition, claim *kazoo.PartitionClaim, st Stored, owner Owner) *Partition {
	o := &Partition{TP: tp, Tracker: NewTracker(st.Start()), Claim: claim, owner: owner, version: st.ZkVersion}
	o.maxOffered.Store(-1)
	o.offeredBeforeRestart.Store(-1)
	o.kafka.next.Store(st.KafkaNext)
	c.mu.Lock()
	if old := c.parts[tp]; old != nil {
		c.recordOffered(old)
	}
	earlier, ok := c.offeredBefore[tp]
	if !ok {
		earlier = -1
	}
	o.deliveries = &claimDeliveries{earlierMax: earlier}
	c.parts[tp] = o
	c.view.set(tp, o)
	c.mu.Unlock()
	return o
}

// Lookup returns the tracked partition tp, or nil, without locking.
func (c *Committer) Lookup(tp TopicPartition) *Partition {
	return c.view.get(tp)
}

// Drop stops tracking o without committing.
func (c *Committer) Drop(o *Partition) {
	c.mu.Lock()
	c.recordOffered(o)
	if c.parts[o.TP] == o {
		delete(c.parts, o.TP)
		c.view.set(o.TP, nil)
	}
	c.mu.Unlock()
}

// recordOffered remembers what o's claim offered, for the claimDeliveries
// of the partition's later claims here. Called with mu held.
func (c *Committer) recordOffered(o *Partition) {
	if o.deliveries == nil {
		return
	}
	if h := o.highestOffered(); h >= 0 {
		if c.offeredBefore == nil {
			c.offeredBefore = make(map[TopicPartition]int64)
		}
		if prev, ok := c.offeredBefore[o.TP]; !ok || h > prev {
			c.offeredBefore[o.TP] = h
		}
	}
}

// Snapshot returns the tracked partitions.
func (c *Committer) Snapshot() []*Partition {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]*Partition, 0, len(c.parts))
	for _, o := range c.parts {
		out = append(out, o)
	}
	return out
}

// ownedByTopic lists the tracked partitions by topic.
func (c *Committer) ownedByTopic() map[string][]int32 {
	out := make(map[string][]int32)
	for _, o := range c.Snapshot() {
		out[o.TP.Topic] = append(out[o.TP.Topic], o.TP.Partition)
	}
	return out
}

// Finalize waits up to timeout for every delivered message of o to be
// marked, commits, and stops tracking o: FinalizePartition, for partitions
// without an owner. A worker drains and commits in states of its own, with
// FinalCommit.
func (c *Committer) Finalize(o *Partition, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	drainErr := o.Tracker.Drain(ctx)
	cancel()
	err := c.FinalCommit(o)
	if drainErr != nil {
		return errors.Join(drainErr, err)
	}
	return err
}

// FinalCommit commits what o has marked and stops tracking o. It retries
// transient errors for a short, bounded time. A claim found lost is an
// error wrapping kazoo.ErrClaimLost (and o is marked lost); nothing is
// written for a partition whose stored offset changed underneath (a seek
// pending: the stored offset stands).
func (c *Committer) FinalCommit(o *Partition) error {
	defer c.Drop(o)
	return backoff.Retry(func() error {
		err := c.Commit(o)
		if err != nil && !retryableCommit(err) {
			return backoff.Permanent(err)
		}
		return err
	}, backoff.WithMaxRetries(newFinalCommitBackOff(), finalCommitRetries))
}

// Bounds of FinalCommit's retries: finalCommitRetries attempts after the
// first, waiting finalCommitBackoff after the first failure, doubling up
// to finalCommitMaxBackoff (1.1 s of waits in all), without jitter.
const (
	finalCommitRetries    = 4
	finalCommitBackoff    = 100 * time.Millisecond
	finalCommitMaxBackoff = 400 * time.Millisecond
)

func newFinalCommitBackOff() *backoff.ExponentialBackOff {
	return backoff.NewExponentialBackOff(
		backoff.WithInitialInterval(finalCommitBackoff),
		backoff.WithMultiplier(2),
		backoff.WithMaxInterval(finalCommitMaxBackoff),
		backoff.WithRandomizationFactor(0),
		backoff.WithMaxElapsedTime(0), // the retry count bounds it
	)
}

// Commit writes o's marked offset if it moved, fenced by o's claim, to the
// store. The store resolves the refusals: a moved epoch marks the
// partition lost and stops its owner; a conflict adopts the stored offset,
// drops pending marks, seeks the owner and reports a *ConflictError.
func (c *Committer) Commit(o *Partition) error {
	o.commitMu.Lock()
	defer o.commitMu.Unlock()
	next, dirty, ok := o.PendingOutsideRecall() // see BeginRecall
	if !ok || o.seeking.Load() || o.lost.Load() {
		return nil
	}
	writes := o.Tracker.Writes()
	err := c.store.Commit(o, next, dirty)
	o.noteCommit(writes, err)
	return err
}

// RewindAsReset stores next, below the stored offset, the way a reset does
// (an epoch bump that ends the claim), where the store can: it reports
// whether it applies. See zookeeperStore.RewindAsReset.
func (c *Committer) RewindAsReset(o *Partition, next int64) (applies bool, err error) {
	return c.store.RewindAsReset(o, next)
}

// CommitAll commits every tracked partition and joins the errors.
func (c *Committer) CommitAll() error {
	return errors.Join(c.CommitEach()...)
}

// maxConcurrentCommits bounds how many partitions commit at once.
const maxConcurrentCommits = 128

// CommitEach commits every tracked partition that has something to commit
// and returns each failure, one *sarama.ConsumerError (or *ConflictError)
// per partition. The commits run concurrently, up to Config.Concurrency at
// a time: ZooKeeper pipelines them on the one session, so a round costs
// about one round trip instead of one per partition. Each partition's own
// commits stay serialised by its commit mutex.
func (c *Committer) CommitEach() []error {
	limit := c.env.cfg.Concurrency
	if limit <= 0 {
		limit = maxConcurrentCommits
	}
	var (
		mu   sync.Mutex
		errs []error
		wg   sync.WaitGroup
		sem  = make(chan struct{}, limit)
	)
	for _, o := range c.Snapshot() {
		if !c.hasWork(o) {
			continue
		}
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			if err := c.Commit(o); err != nil {
				mu.Lock()
				errs = append(errs, err)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	return errs
}

// hasWork reports whether Commit has something to do for o: a pending
// offset, or one the store should be given again (Store.Due).
func (c *Committer) hasWork(o *Partition) bool {
	if _, dirty := o.Tracker.Pending(); dirty {
		return true
	}
	return c.store.Due(o)
}

func (c *Committer) commitLoop() {
	defer close(c.closed)
	if c.env.cfg.CommitInterval <= 0 {
		<-c.closing
		return
	}
	t := time.NewTicker(c.env.cfg.CommitInterval)
	defer t.Stop()
	for {
		select {
		case <-c.closing:
			return
		case <-t.C:
			for _, err := range c.CommitEach() {
				var conflict *ConflictError
				if !errors.As(err, &conflict) { // conflicts are reported by commit
					c.env.report(err)
				}
			}
		}
	}
}

// InitializePartition starts tracking a partition for a caller outside the
// group's own workers: unfenced, as upstream. It returns the stored next
// offset (-1 if none).
func (c *Committer) InitializePartition(topic string, partition int32) (int64, error) {
	tp := TopicPartition{topic, partition}
	st, err := c.store.Read(tp)
	if err != nil {
		return -1, err
	}
	c.Adopt(tp, nil, st, nil)
	return st.Start(), nil
}

// MarkAsProcessed marks offset of a tracked partition; it returns whether
// the mark was accepted.
func (c *Committer) MarkAsProcessed(topic string, partition int32, offset int64) bool {
	o := c.Lookup(TopicPartition{topic, partition})
	if o == nil {
		return false
	}
	return o.Mark(nil, offset)
}

// MarkMessage is MarkAsProcessed for a message the group delivered: inside
// a redelivery window it counts only for the message redelivered there.
func (c *Committer) MarkMessage(m *sarama.ConsumerMessage) bool {
	o := c.Lookup(TopicPartition{m.Topic, m.Partition})
	if o == nil {
		return false
	}
	return o.Mark(m, m.Offset)
}

// ResetOffset rewinds the mark of a tracked partition to next (see
// Partition.Rewind).
func (c *Committer) ResetOffset(topic string, partition int32, next int64) bool {
	c.mu.RLock()
	o := c.parts[TopicPartition{topic, partition}]
	c.mu.RUnlock()
	if o == nil {
		return false
	}
	return o.Rewind(next)
}

// Flush commits the marked offsets of every tracked partition now.
func (c *Committer) Flush() error {
	return c.CommitAll()
}

// FinalizePartition waits up to timeout for lastOffset to be marked,
// commits, and stops tracking the partition.
func (c *Committer) FinalizePartition(topic string, partition int32, lastOffset int64, timeout time.Duration) error {
	c.mu.Lock()
	o := c.parts[TopicPartition{topic, partition}]
	c.mu.Unlock()
	if o == nil {
		return nil
	}
	if lastOffset >= 0 {
		o.Tracker.Delivered(lastOffset)
	}
	return c.Finalize(o, timeout)
}

// Close stops the commit loop after a last commit; left is the number of
// partitions still tracked then. Later calls return 0, nil.
func (c *Committer) Close() (left int, err error) {
	c.closeOnce.Do(func() {
		close(c.closing)
		if c.started {
			<-c.closed
		}
		err = c.CommitAll()
		c.mu.Lock()
		left = len(c.parts)
		c.mu.Unlock()
	})
	return left, err
}

// partitionError returns a *sarama.ConsumerError for topic/partition
// wrapping err, or nil if err is nil; an err that already is one for the
// same partition is returned as it is.
func partitionError(topic string, partition int32, err error) error {
	if err == nil {
		return nil
	}
	var pe *sarama.ConsumerError
	if errors.As(err, &pe) && pe.Topic == topic && pe.Partition == partition {
		return err
	}
	return &sarama.ConsumerError{Topic: topic, Partition: partition, Err: err}
}
