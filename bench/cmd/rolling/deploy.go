package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/zkgroup/kafka/bench/internal/benchstack"
)

// options are the run's settings, from the flags.
type options struct {
	st         benchstack.Stack
	instances  int
	partitions int
	away       time.Duration // how long a restarted instance stays away
	rate       int           // messages/s
	warm       time.Duration // producing before the deploy starts, and after it ends
	stable     time.Duration // how long a balanced assignment must hold to count as stable
	settleMax  time.Duration // longest wait for a stable group
	drain      time.Duration // longest wait for every acknowledged message after the producer stops
	grace      time.Duration // -case never-returns: ours' Static.GraceWindow
	stall      time.Duration // the shortest group stall, and producer gap, that counts
}

// group is one kind's run: its topic, group name, ledger and instances.
type group struct {
	kind    string
	start   starter
	spec    memberSpec
	opts    options
	running []member // by slot; nil while away
}

func newGroup(ctx context.Context, kind string, opts options, grace time.Duration) (*group, error) {
	start, ok := kinds[kind]
	if !ok {
		return nil, fmt.Errorf("unknown group %q", kind)
	}
	stamp := time.Now().UnixNano()
	topic := fmt.Sprintf("zkgroup.bench.rolling.%s.%d", kind, stamp)
	if err := benchstack.CreateTopic(ctx, opts.st.Brokers, topic, opts.partitions); err != nil {
		return nil, err
	}
	return &group{
		kind:    kind,
		start:   start,
		spec:    memberSpec{st: opts.st, group: fmt.Sprintf("rolling-%s-%d", kind, stamp), topic: topic, grace: grace, ledger: newLedger()},
		opts:    opts,
		running: make([]member, opts.instances),
	}, nil
}

// startSlot starts the instance of slot.
func (g *group) startSlot(slot int) error {
	m, err := g.start(g.spec, slot)
	if err != nil {
		return fmt.Errorf("%s: start %s: %w", g.kind, instanceID(slot), err)
	}
	g.running[slot] = m
	return nil
}

// closeSlot closes the instance of slot.
func (g *group) closeSlot(slot int) error {
	m := g.running[slot]
	g.running[slot] = nil
	if m == nil {
		return nil
	}
	if err := m.close(); err != nil {
		return fmt.Errorf("%s: close %s: %w", g.kind, instanceID(slot), err)
	}
	return nil
}

// remove closes every running instance and deletes the group's topic.
func (g *group) remove() {
	if err := g.closeAll(); err != nil {
		fmt.Fprintln(os.Stderr, err)
	}
	benchstack.DeleteTopic(g.opts.st.Brokers, g.spec.topic)
}

// closeAll closes every running instance, reporting the first error.
func (g *group) closeAll() error {
	var errs []error
	for slot := range g.running {
		errs = append(errs, g.closeSlot(slot))
	}
	return errors.Join(errs...)
}

// live is the slots running now.
func (g *group) live() []int {
	var s []int
	for slot, m := range g.running {
		if m != nil {
			s = append(s, slot)
		}
	}
	return s
}

// awaitStable waits until the running instances hold a balanced
// assignment (every partition held by one of them, each its even share)
// that stays the same for opts.stable, and returns it and when it began.
func (g *group) awaitStable() (map[int32]int, time.Time, error) {
	deadline := time.Now().Add(g.opts.settleMax)
	var last map[int32]int
	var since time.Time
	for time.Now().Before(deadline) {
		owners, ok := g.spec.ledger.balancedOwners(g.opts.partitions, g.live())
		switch {
		case !ok:
			last = nil
		case last == nil || !sameOwners(owners, last):
			last, since = owners, time.Now()
		case time.Since(since) >= g.opts.stable:
			return owners, since, nil
		}
		time.Sleep(20 * time.Millisecond)
	}
	return nil, time.Time{}, fmt.Errorf("%s: no stable assignment over %v within %v", g.kind, g.live(), g.opts.settleMax)
}

func sameOwners(a, b map[int32]int) bool {
	if len(a) != len(b) {
		return false
	}
	for p, s := range a {
		if t, ok := b[p]; !ok || t != s {
			return false
		}
	}
	return true
}

// drainAndStop stops the producer, waits until every acknowledged offset
// was delivered (or opts.drain passed), then closes every instance.
func (g *group) drainAndStop(p *producer) error {
	if err := p.close(); err != nil {
		fmt.Fprintf(os.Stderr, "%s: producer: %v\n", g.kind, err)
	}
	deadline := time.Now().Add(g.opts.drain)
	for g.spec.ledger.missing() > 0 && time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
	}
	return g.closeAll()
}

// step is one instance's restart.
type step struct {
	Instance string        `json:"instance"`
	CloseAt  time.Duration `json:"close_at_ns"` // when its close began, from the deploy's start
	Close    time.Duration `json:"close_ns"`    // its close, start to return
	Rejoin   time.Duration `json:"rejoin_ns"`   // from its start again to a stable group
}

// runRolling runs kind's rolling deploy and returns its row.
func runRolling(kind string, opts options) (row, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	g, err := newGroup(ctx, kind, opts, 0)
	if err != nil {
		return row{}, err
	}
	defer g.remove()
	for slot := range opts.instances {
		if err := g.startSlot(slot); err != nil {
			return row{}, err
		}
	}
	if _, _, err := g.awaitStable(); err != nil {
		return row{}, err
	}
	p, err := startProducer(opts.st.Brokers, g.spec.topic, opts.partitions, opts.rate, g.spec.ledger)
	if err != nil {
		return row{}, err
	}
	time.Sleep(opts.warm)
	before, _, err := g.awaitStable()
	if err != nil {
		_ = p.close()
		return row{}, err
	}
	var steps []step
	t0, t1 := time.Now(), time.Time{} // the deploy: from the first close to the last stable assignment
	for slot := range opts.instances {
		c0 := time.Now()
		if err := g.closeSlot(slot); err != nil {
			fmt.Fprintln(os.Stderr, err) // an error of the final commit: the figures will show what it cost
		}
		closed := time.Since(c0)
		time.Sleep(opts.away)
		s0 := time.Now()
		if err := g.startSlot(slot); err != nil {
			_ = p.close()
			return row{}, err
		}
		_, since, err := g.awaitStable()
		if err != nil {
			_ = p.close()
			return row{}, err
		}
		t1 = since
		st := step{Instance: instanceID(slot), CloseAt: c0.Sub(t0), Close: closed, Rejoin: since.Sub(s0)}
		steps = append(steps, st)
		fmt.Fprintf(os.Stderr, "%s: %s closed in %v, stable again %v after its start\n", kind, st.Instance, st.Close.Round(time.Millisecond), st.Rejoin.Round(time.Millisecond))
	}
	time.Sleep(opts.warm)
	if err := g.drainAndStop(p); err != nil {
		fmt.Fprintln(os.Stderr, err)
	}
	r := measure(g.spec.ledger, before, t0, t1, opts)
	r.Group = kind
	r.Steps = steps
	return r, nil
}
