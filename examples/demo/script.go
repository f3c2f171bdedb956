package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"
)

// script runs the demo's story on the demo clock: wait until the members
// share the partitions, produce for -duration, cut member 2 off from
// ZooKeeper a quarter in, let it back later, then wait until every message
// was delivered and close the members.
type script struct {
	o *options
	d *demo

	mu     sync.Mutex
	window cutWindow // what happened to the cut member, so far
}

func newScript(o *options, d *demo) *script { return &script{o: o, d: d} }

// plan returns when, after production starts at start, the member is cut
// off and let back, and when production ends. The member stays cut off for
// a quarter of the run but at least 2.5 session timeouts (its session must
// expire for its partitions to move), and comes back at least 1.25 session
// timeouts before the end (to rejoin while messages still flow).
func (s *script) plan(start time.Duration) (cut, restore, end time.Duration) {
	cut = start + s.o.duration/4
	end = start + s.o.duration
	restore = min(cut+max(s.o.duration/4, s.o.session*5/2), end-s.o.session*5/4)
	return cut, restore, end
}

// cutNow returns the member cut off now and for how long, or 0.
func (s *script) cutNow() (int, time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.window.member == 0 || s.window.restored != 0 {
		return 0, 0
	}
	return s.window.member, s.d.ledger.since() - s.window.cut
}

func (s *script) cutWindow() cutWindow {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.window
}

func (s *script) isCut(id int) bool {
	m, _ := s.cutNow()
	return m == id
}

func (s *script) cut(now time.Duration) {
	s.d.members[cutMember-1].cut()
	s.mu.Lock()
	s.window = cutWindow{member: cutMember, cut: now}
	s.mu.Unlock()
	s.d.timeline.add("member %d CUT OFF from ZooKeeper: its proxy drops its connections and refuses new ones (session timeout %s)", cutMember, s.o.session)
}

func (s *script) restore(now time.Duration) {
	s.d.members[cutMember-1].restore()
	s.mu.Lock()
	s.window.restored = now
	s.mu.Unlock()
	s.d.timeline.add("member %d can reach ZooKeeper again", cutMember)
}

// run plays the script, drawing the view every second; it returns when the
// members are closed, or with an error when the demo could not run.
func (s *script) run(ctx context.Context, out io.Writer, live bool) error {
	d := s.d
	stopOwners := make(chan struct{})
	d.owners = newOwners(d.kz, d.group, d.topic, s.o.partitions, d.members, d.timeline, s.cutNow)
	ownersDone := make(chan struct{})
	go func() {
		defer close(ownersDone)
		d.owners.run(250*time.Millisecond, stopOwners)
	}()
	defer func() {
		select {
		case <-stopOwners:
		default:
			close(stopOwners)
		}
		<-ownersDone
	}()

	var cut, restore, end time.Duration
	phase := "waiting for the members to share the partitions"
	v := &view{
		out: out, live: live, members: d.members, ledger: d.ledger, owners: d.owners, timeline: d.timeline,
		isCut: s.isCut,
		header: fmt.Sprintf("zkgroup/kafka demo: %d members share topic %s (%d partitions); ZooKeeper session timeout %s",
			members, d.topic, s.o.partitions, s.o.session),
		status: func() string { return phase },
	}
	if !live {
		fmt.Fprintln(out, v.header)
	}
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	nextDraw := d.ledger.since() + time.Second // on a fixed beat, so no second is skipped
	// every runs step on each tick and draws the view every second, until
	// step returns true, ctx ends or the deadline passes (false then).
	every := func(deadline time.Duration, step func(now time.Duration) bool) bool {
		for {
			d.timeline.flush()
			select {
			case <-ctx.Done():
				return false
			case <-tick.C:
			}
			now := d.ledger.since()
			done := step(now)
			if now >= nextDraw {
				v.draw()
				if nextDraw += time.Second; nextDraw <= now {
					nextDraw = now + time.Second
				}
			}
			if done {
				return true
			}
			if deadline > 0 && now >= deadline {
				return false
			}
		}
	}

	// 1. Every partition owned, every member owning some.
	if !every(d.ledger.since()+60*time.Second, func(time.Duration) bool { return shared(d.owners.snapshot()) }) {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return errors.New("the members did not share the partitions within 60s")
	}

	// 2. Produce; cut member 2 off and let it back on schedule.
	start := d.ledger.since()
	cut, restore, end = s.plan(start)
	d.timeline.add("producer started: %d messages/s for %s; member %d will be cut off at t=%.1fs and let back at t=%.1fs",
		s.o.rate, s.o.duration, cutMember, cut.Seconds(), restore.Seconds())
	stopProducer := make(chan struct{})
	produced := make(chan error, 1)
	go func() { produced <- produce(d.brokers, d.topic, s.o.rate, d.ledger, d.timeline, stopProducer) }()
	var producerErr error
	every(0, func(now time.Duration) bool {
		select {
		case producerErr = <-produced:
			return true
		default:
		}
		w := s.cutWindow()
		switch {
		case w.member == 0 && now >= cut:
			s.cut(now)
		case w.member != 0 && w.restored == 0 && now >= restore:
			s.restore(now)
		}
		w = s.cutWindow()
		switch {
		case w.member == 0:
			phase = fmt.Sprintf("member %d will be cut off from ZooKeeper at t=%.0fs", cutMember, cut.Seconds())
		case w.restored == 0:
			phase = fmt.Sprintf("member %d CUT OFF from ZooKeeper since t=%.0fs (%.0fs ago); back at t=%.0fs",
				cutMember, w.cut.Seconds(), (now - w.cut).Seconds(), restore.Seconds())
		default:
			phase = fmt.Sprintf("member %d back since t=%.0fs; producing until t=%.0fs", cutMember, w.restored.Seconds(), end.Seconds())
		}
		return now >= end
	})
	close(stopProducer)
	if producerErr == nil {
		producerErr = <-produced
	}
	if producerErr != nil {
		return producerErr
	}
	if w := s.cutWindow(); w.member != 0 && w.restored == 0 {
		s.restore(d.ledger.since()) // interrupted while cut off
	}
	d.timeline.add("producer stopped after %d messages; waiting until every message was delivered", d.ledger.gauges().produced)

	// 3. Every message delivered (or 60 s, or interrupted).
	phase = "producer stopped; waiting for the members to catch up"
	if !every(d.ledger.since()+60*time.Second, func(time.Duration) bool { return d.ledger.caughtUp() }) && ctx.Err() == nil {
		d.timeline.add("the members did not catch up within 60s")
	}

	// 4. Close: each member commits what it marked and leaves.
	phase = "closing the members"
	err := d.closeMembers()
	d.timeline.add("members closed")
	phase = "done"
	v.draw()
	return err
}

// shared reports whether every partition has an owner among the members
// and every member owns a partition.
func shared(owner []int) bool {
	seen := make(map[int]bool)
	for _, o := range owner {
		if o <= 0 {
			return false
		}
		seen[o] = true
	}
	return len(seen) == members
}
