package main

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"
)

// event is one line of the demo's timeline.
type event struct {
	at   time.Duration
	text string
}

func (e event) String() string { return fmt.Sprintf("t=%5.1fs  %s", e.at.Seconds(), e.text) }

// timeline collects events from the members, the ownership watcher and the
// script of the run. Safe for concurrent use.
type timeline struct {
	clock func() time.Duration

	mu      sync.Mutex
	events  []event
	pending map[string][]int // notes not yet turned into events, by text
	order   []string         // pending's keys, first noted first
	said    map[string]time.Duration
}

// repeatAfter is how long a note's text stays quiet after it was shown, so
// that an error retried every second shows once, not every second.
const repeatAfter = 5 * time.Second

// note records that what happened to partition (-1: to no partition in
// particular); notes with the same text become one event, listing the
// partitions, at the next flush.
func (t *timeline) note(what string, partition int32) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.pending == nil {
		t.pending = make(map[string][]int)
	}
	ps, seen := t.pending[what]
	if !seen {
		t.order = append(t.order, what)
	}
	if partition >= 0 && !slices.Contains(ps, int(partition)) {
		ps = append(ps, int(partition))
	}
	t.pending[what] = ps
}

// flush turns the pending notes into events.
func (t *timeline) flush() {
	at := t.clock()
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.said == nil {
		t.said = make(map[string]time.Duration)
	}
	for _, what := range t.order {
		if last, ok := t.said[what]; ok && at-last < repeatAfter {
			continue
		}
		t.said[what] = at
		ps := t.pending[what]
		text := what
		if len(ps) > 0 {
			slices.Sort(ps)
			text = fmt.Sprintf("%s (partitions %s)", what, partitionList(ps))
		}
		t.events = append(t.events, event{at: at, text: text})
	}
	t.pending, t.order = nil, nil
}

func (t *timeline) add(format string, args ...any) {
	e := event{at: t.clock(), text: fmt.Sprintf(format, args...)}
	t.mu.Lock()
	t.events = append(t.events, e)
	t.mu.Unlock()
}

// since returns the events from index i on, and the index after them.
func (t *timeline) since(i int) ([]event, int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return append([]event(nil), t.events[i:]...), len(t.events)
}

// last returns up to n of the latest events.
func (t *timeline) last(n int) []event {
	t.mu.Lock()
	defer t.mu.Unlock()
	return append([]event(nil), t.events[max(0, len(t.events)-n):]...)
}

// What the consumer group logs when its session fence acts; the demo
// watches its members' logs for these.
const (
	logFenced   = "fenced: delivery paused"
	logResumed  = "delivery resumed"
	logExpired  = "session expired"
	logJoined   = "joined consumer group"
	attrMember  = "instance"
	levelEvents = slog.LevelInfo
)

// memberLog is a slog.Handler given to one member's consumer group as its
// Logger: it learns the member's instance ID, turns fence and session
// records into events and state, and passes every record on to next (the
// -verbose output) if there is one.
type memberLog struct {
	state *memberState
	attrs []slog.Attr
	next  slog.Handler // nil: records are not printed
}

// memberState is what a member's log revealed so far.
type memberState struct {
	id       int
	timeline *timeline

	mu         sync.Mutex
	instanceID string
	fenced     bool
	fencedAt   time.Duration
}

func (s *memberState) snapshot() (instanceID string, fenced bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.instanceID, s.fenced
}

// Enabled implements slog.Handler.
func (h *memberLog) Enabled(ctx context.Context, level slog.Level) bool {
	return level >= levelEvents || (h.next != nil && h.next.Enabled(ctx, level))
}

// Handle implements slog.Handler.
func (h *memberLog) Handle(ctx context.Context, r slog.Record) error {
	if r.Level >= levelEvents {
		h.observe(r.Message)
	}
	if h.next != nil && h.next.Enabled(ctx, r.Level) {
		return h.next.Handle(ctx, r)
	}
	return nil
}

// WithAttrs implements slog.Handler.
func (h *memberLog) WithAttrs(attrs []slog.Attr) slog.Handler {
	c := *h
	c.attrs = append(append([]slog.Attr(nil), h.attrs...), attrs...)
	for _, a := range attrs {
		if a.Key == attrMember {
			h.state.mu.Lock()
			h.state.instanceID = a.Value.String()
			h.state.mu.Unlock()
		}
	}
	if h.next != nil {
		c.next = h.next.WithAttrs(attrs)
	}
	return &c
}

// WithGroup implements slog.Handler.
func (h *memberLog) WithGroup(name string) slog.Handler {
	c := *h
	if h.next != nil {
		c.next = h.next.WithGroup(name)
	}
	return &c
}

func (h *memberLog) observe(msg string) {
	s := h.state
	now := s.timeline.clock()
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case strings.Contains(msg, logFenced):
		if !s.fenced {
			s.fenced, s.fencedAt = true, now
			s.timeline.add("member %d FENCED: ZooKeeper has not vouched for its session; delivery paused", s.id)
		}
	case strings.Contains(msg, logResumed):
		if s.fenced {
			s.fenced = false
			s.timeline.add("member %d: fence lifted after %.1fs: ZooKeeper vouches for its session", s.id, (now - s.fencedAt).Seconds())
		}
	case strings.Contains(msg, logExpired):
		s.timeline.add("member %d: its ZooKeeper session expired; it drops its partitions without committing and joins again", s.id)
	case strings.Contains(msg, logJoined):
		s.timeline.add("member %d joined the group", s.id)
	}
}
