package coord

import (
	"log/slog"
	"time"

	"github.com/cenkalti/backoff/v4"

	"github.com/zkgroup/kafka/internal/assign"
	"github.com/zkgroup/kafka/internal/topics"
)

// resyncInterval bounds how long a missed watch can leave the assignment
// stale: the loop recomputes it at least this often.
const resyncInterval = 30 * time.Second

// Bounds of the waits before the view is read again after a failed read:
// readRetryBackoff after the first failure, doubling up to
// readRetryMaxBackoff, without jitter. Any wake-up reads it sooner.
const (
	readRetryBackoff    = 200 * time.Millisecond
	readRetryMaxBackoff = 5 * time.Second
)

func newReadBackOff() *backoff.ExponentialBackOff {
	return backoff.NewExponentialBackOff(
		backoff.WithInitialInterval(readRetryBackoff),
		backoff.WithMultiplier(2),
		backoff.WithMaxInterval(readRetryMaxBackoff),
		backoff.WithRandomizationFactor(0),
		backoff.WithMaxElapsedTime(0), // never backoff.Stop: the loop retries until stopped
	)
}

// Config is what the loop needs of the group's configuration.
type Config struct {
	// InstanceID is this instance's registered ID.
	InstanceID string
	// Strategy divides each topic's partitions; it must be valid.
	Strategy assign.Strategy
	// RetryCooldown is how long a partition whose worker failed (not lost
	// its claim) waits before it is started again (Claim.RetryCooldown).
	RetryCooldown time.Duration
	// RegisterTimeout bounds the retries of a registration whose outcome
	// is in doubt (Zookeeper.ConnectTimeout).
	RegisterTimeout time.Duration
	// Topics is a static subscription; ignored when WhiteList is set.
	Topics []string
	// WhiteList, when not nil, subscribes to every existing topic it
	// covers.
	WhiteList *assign.WhiteList
}

// Metrics receives the loop's measurements.
type Metrics interface {
	// Owned is the number of partitions this instance works on now.
	Owned(n int)
	// Rebalanced counts a change of this instance's assignment.
	Rebalanced()
	// RebalanceTook is how long the partitions gained in one rebalance
	// took to be claimed (or their workers to end).
	RebalanceTook(d time.Duration)
}

// Deps is what the loop works with.
type Deps struct {
	ZooKeeper ZooKeeper
	// Reservations are the static members' reservations; nil: none are
	// read, and absent static members keep no share.
	Reservations Reservations
	Topics       topics.Source // partitions and leaders of the subscribed topics
	Workers      Workers
	// Expired receives a token when the session expired and was replaced
	// (the session fence's signal).
	Expired <-chan struct{}
	// SweepWake receives a token when a worker ended that may have left an
	// owner node, so the sweep runs at once.
	SweepWake <-chan struct{}
	// Stop is closed when the group closes: Run stops every worker and
	// returns.
	Stop <-chan struct{}
	Log  *slog.Logger
	// Report sends err to the group's error channel, for topic and
	// partition ("" and -1 for the group as a whole). It must not block.
	Report func(topic string, partition int32, err error)
	// Fenced, when not nil, is told (once) that the instance is fenced:
	// another session registered its static id (kazoo.ErrFencedInstanceID)
	// and the loop stopped every partition. It must not block.
	Fenced func(err error)
	// RegistrationPath is the znode of an instance's registration, named
	// in errors.
	RegistrationPath func(id string) string
	Metrics          Metrics
}

// Loop is a group instance's coordination loop; see the package doc.
type Loop struct {
	cfg Config
	d   Deps
}

// New returns a loop over deps; it does nothing until Run.
func New(cfg Config, deps Deps) *Loop {
	return &Loop{cfg: cfg, d: deps}
}

// partitions is the loop's record of its workers; Run's goroutine only.
type partitions struct {
	workers  map[TopicPartition]Worker    // assigned here, running
	stopping map[TopicPartition]Worker    // stopped, maybe not done
	cooldown map[TopicPartition]time.Time // not to restart before then
	leftover map[TopicPartition]bool      // an owner node of ours may be left
	exited   chan Worker                  // a worker ended on its own
}

func newPartitions() *partitions {
	return &partitions{
		workers:  make(map[TopicPartition]Worker),
		stopping: make(map[TopicPartition]Worker),
		cooldown: make(map[TopicPartition]time.Time),
		leftover: make(map[TopicPartition]bool),
		exited:   make(chan Worker),
	}
}

// owned returns the partitions with a worker running, for the view to read
// their leaders (readView).
func (ps *partitions) owned() map[TopicPartition]bool {
	out := make(map[TopicPartition]bool, len(ps.workers))
	for tp := range ps.workers {
		out[tp] = true
	}
	return out
}

// stopAll stops every worker and waits for them, also for those stopping
// already; abandon stops them without a final commit.
func (ps *partitions) stopAll(abandon bool) {
	for tp, w := range ps.workers {
		w.Stop(abandon)
		ps.stopping[tp] = w
		delete(ps.workers, tp)
	}
	for tp, w := range ps.stopping {
		if abandon { // partitions still draining: no final commit either
			w.Stop(true)
		}
		<-w.Done()
		delete(ps.stopping, tp)
		if w.MayHoldNode() {
			ps.leftover[tp] = true
		}
	}
}

// Run is the loop: it returns once Deps.Stop is closed and every worker
// has stopped.
func (l *Loop) Run() {
	ws := newLoopWatches()
	defer func() { ws.set.Close() }() // the set of the last session
	ps := newPartitions()
	missing := make(map[string]bool)   // topics reported missing
	badRegs := make(map[string]bool)   // instances whose registration was reported unreadable
	absent := make(map[string]absence) // static members seen absent, since when
	fenced := false                    // our static id is registered by another session
	cooled := make(chan struct{}, 1)   // a cool-down ended
	resync := time.NewTicker(resyncInterval)
	defer resync.Stop()
	defer func() { ps.stopAll(false) }()

	failures := 0 // consecutive failed reads of the view
	readRetry := newReadBackOff()
	type viewResult struct {
		v   view
		err error
	}
	for {
		if fenced { // another instance consumes under our id: idle until Close
			l.sweepWhileFenced(ps)
			return
		}
		// Reads from ZooKeeper can hang for a long time when it is out of
		// reach; Close must not wait for them. A read abandoned here ends
		// when Close closes the session.
		res := make(chan viewResult, 1)
		owned := ps.owned()
		go func(ws loopWatches) {
			v, err := l.readView(ws, missing, badRegs, absent, owned)
			res <- viewResult{v, err}
		}(ws)
		var v view
		var err error
		select {
		case r := <-res:
			v, err = r.v, r.err
		case <-l.d.Stop:
			return
		}
		switch {
		case err != nil:
			failures++
			l.d.Log.Warn("reading the group's state failed; retrying", "err", err, "failures", failures)
			if failures == 1 || failures%10 == 0 {
				l.d.Report("", -1, err)
			}
		case !v.has(l.cfg.InstanceID):
			// Our registration is gone. After a session expiry the fence's
			// signal (handled below) drops every partition without
			// committing and registers again; until it has, nothing here
			// stops through the committing path. Otherwise (someone deleted
			// the node, or registering after an expiry failed) register
			// again now.
			failures = 0
			if l.d.ZooKeeper.Connected() && len(l.d.Expired) == 0 {
				fenced = l.registerAgain(ps, "register again")
			}
		default:
			failures = 0
			l.reconcile(v, ps)
		}
		if fenced {
			continue
		}

		var retry, graceEnds <-chan time.Time
		if err != nil {
			retry = time.After(readRetry.NextBackOff())
		} else {
			readRetry.Reset()
		}
		if !v.reservedTo.IsZero() {
			graceEnds = time.After(time.Until(v.reservedTo))
		}
		select {
		case <-l.d.Stop:
			return
		case <-ws.wake:
		case <-l.d.Topics.Changed(): // partitions or leaders changed
		case <-cooled:
		case <-l.d.SweepWake:
		case <-retry:
		case <-graceEnds: // a static member's grace window ended
		case <-resync.C:
			// The registrations and the topics' partition lists known from
			// their watches are read again, in case a watch never fires.
			ws.set.Forget()
			if f, ok := l.d.Topics.(interface{ Forget() }); ok {
				f.Forget()
			}
		case <-l.d.Expired:
			// Every claim died with the session: stop all partitions without
			// committing or releasing, then register again.
			ps.stopAll(true)
			clear(ps.leftover) // the session's nodes are gone with it
			fenced = l.registerAgain(ps, "register again after session expiry")
			ws.set.Close() // the old watches died with the session
			ws = newLoopWatches()
		case w := <-ps.exited:
			// A partition that ended on its own is started again if still
			// assigned here. When its claim ended (lost to another claim, an
			// owner node deleted, the session replaced) it is claimed again
			// at once: the claim loop waits for the partition to be free, so
			// it is owned as soon as it is. After any other failure (a
			// permanent claim error) it waits RetryCooldown, so a
			// persistent error does not spin.
			tp := w.Partition()
			if ps.workers[tp] == w {
				delete(ps.workers, tp)
				ps.stopping[tp] = w
				wait := l.cfg.RetryCooldown
				if w.ClaimEnded() {
					wait = 0
				} else {
					ps.cooldown[tp] = time.Now().Add(wait)
				}
				time.AfterFunc(wait, func() { poke(cooled) })
			}
		}
	}
}
