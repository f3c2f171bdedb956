package main

import (
	"context"
	"fmt"
	"os"
	"slices"
	"time"
)

// neverReturns is the -case never-returns figure.
type neverReturns struct {
	Grace      time.Duration `json:"grace_window_ns"`
	Close      time.Duration `json:"close_ns"`      // the leaver's Close, start to return
	Taken      time.Duration `json:"taken_over_ns"` // from the start of its Close to the first delivery by another instance of the last of its partitions
	Partitions int           `json:"partitions"`    // the leaver's partitions
	Lost       int           `json:"lost"`
	Dups       int           `json:"duplicates"`
	Early      int           `json:"early"` // deliveries of the leaver's partitions by others within the window
}

// runNeverReturns runs ours, static, with grace window opts.grace: the
// last instance closes and never returns; it returns the time until its
// partitions were delivered by the others.
func runNeverReturns(opts options) (neverReturns, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	g, err := newGroup(ctx, "ours-static", opts, opts.grace)
	if err != nil {
		return neverReturns{}, err
	}
	defer g.remove()
	for slot := range opts.instances {
		if err := g.startSlot(slot); err != nil {
			return neverReturns{}, err
		}
	}
	if _, _, err := g.awaitStable(); err != nil {
		return neverReturns{}, err
	}
	l := g.spec.ledger
	p, err := startProducer(opts.st.Brokers, g.spec.topic, opts.partitions, opts.rate, l)
	if err != nil {
		return neverReturns{}, err
	}
	time.Sleep(opts.warm)
	before, _, err := g.awaitStable()
	if err != nil {
		_ = p.close()
		return neverReturns{}, err
	}
	leaver := opts.instances - 1
	var theirs []int32
	for part, s := range before {
		if s == leaver {
			theirs = append(theirs, part)
		}
	}
	slices.Sort(theirs)
	c0 := time.Now()
	if err := g.closeSlot(leaver); err != nil {
		fmt.Fprintln(os.Stderr, err)
	}
	res := neverReturns{Grace: opts.grace, Close: time.Since(c0), Partitions: len(theirs)}
	taken := func() (time.Duration, bool) {
		ds := l.snapshot().deliveries
		first := make(map[int32]time.Time)
		for _, d := range ds {
			if d.slot != leaver && d.at.After(c0) && before[d.partition] == leaver {
				if t, ok := first[d.partition]; !ok || d.at.Before(t) {
					first[d.partition] = d.at
				}
			}
		}
		var last time.Duration
		for _, part := range theirs {
			t, ok := first[part]
			if !ok {
				return 0, false
			}
			last = max(last, t.Sub(c0))
		}
		return last, true
	}
	deadline := time.Now().Add(opts.grace + opts.settleMax)
	for {
		if d, ok := taken(); ok {
			res.Taken = d
			break
		}
		if time.Now().After(deadline) {
			_ = p.close()
			return res, fmt.Errorf("the leaver's partitions not all delivered by the others within %v", opts.grace+opts.settleMax)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if _, _, err := g.awaitStable(); err != nil {
		fmt.Fprintln(os.Stderr, err)
	}
	if err := g.drainAndStop(p); err != nil {
		fmt.Fprintln(os.Stderr, err)
	}
	rec := l.snapshot()
	for _, d := range rec.deliveries {
		if d.slot != leaver && before[d.partition] == leaver && d.at.After(c0) && d.at.Before(c0.Add(opts.grace)) {
			res.Early++
		}
	}
	res.Lost, res.Dups = lostAndDuplicates(rec)
	return res, nil
}
