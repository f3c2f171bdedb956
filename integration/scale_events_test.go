package integration

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"time"
)

// scaleEvent is one log record of a group, reduced to what the scale
// benchmarks time: when, what, and which partition (-1 for none).
type scaleEvent struct {
	at        time.Time
	msg       string
	topic     string
	partition int32
	err       string // the record's err attribute, if any
	offset    int64  // the record's offset attribute; -1 if none
	rest      string // with keepAll, every other attribute, key=value, for the dump
}

// eventLog is a slog.Handler that keeps the records of one instance in
// memory, so a benchmark can place the library's own steps (rebalanced,
// claimed, released, first fetch) on the timeline of a rebalance. Records
// at debug level are kept too.
type eventLog struct {
	rec   *eventRecords
	attrs []slog.Attr
	// keepAll keeps every attribute of a record for the dump
	// (ZKGROUP_SCALE_DUMP), not only those the breakdown reads.
	keepAll bool
}

type eventRecords struct {
	mu     sync.Mutex
	events []scaleEvent
}

func newEventLog() *eventLog {
	return &eventLog{rec: &eventRecords{}, keepAll: os.Getenv("ZKGROUP_SCALE_DUMP") != ""}
}

func (l *eventLog) logger() *slog.Logger { return slog.New(l) }

// Enabled implements slog.Handler: every level.
func (l *eventLog) Enabled(context.Context, slog.Level) bool { return true }

// Handle implements slog.Handler.
func (l *eventLog) Handle(_ context.Context, r slog.Record) error {
	e := scaleEvent{at: r.Time, msg: r.Message, partition: -1, offset: -1}
	take := func(a slog.Attr) bool {
		switch a.Key {
		case "topic":
			e.topic = a.Value.String()
		case "partition":
			e.partition = int32(a.Value.Int64())
		case "offset":
			e.offset = a.Value.Int64()
		case "err":
			e.err = a.Value.String()
		default:
			if l.keepAll {
				e.rest += " " + a.Key + "=" + a.Value.String()
			}
		}
		return true
	}
	for _, a := range l.attrs {
		take(a)
	}
	r.Attrs(take)
	l.rec.mu.Lock()
	l.rec.events = append(l.rec.events, e)
	l.rec.mu.Unlock()
	return nil
}

// WithAttrs implements slog.Handler.
func (l *eventLog) WithAttrs(attrs []slog.Attr) slog.Handler {
	return &eventLog{rec: l.rec, attrs: append(append([]slog.Attr(nil), l.attrs...), attrs...), keepAll: l.keepAll}
}

// WithGroup implements slog.Handler; groups are flattened.
func (l *eventLog) WithGroup(string) slog.Handler { return l }

// byPartition returns, for each partition, the time of the first record
// with message msg at or after since.
func (l *eventLog) byPartition(msg string, since time.Time) map[int32]time.Time {
	l.rec.mu.Lock()
	defer l.rec.mu.Unlock()
	out := make(map[int32]time.Time)
	for _, e := range l.rec.events {
		if e.msg != msg || e.at.Before(since) {
			continue
		}
		if t, ok := out[e.partition]; !ok || e.at.Before(t) {
			out[e.partition] = e.at
		}
	}
	return out
}

// first returns the first record with message msg at or after since.
func (l *eventLog) first(msg string, since time.Time) (time.Time, bool) {
	l.rec.mu.Lock()
	defer l.rec.mu.Unlock()
	for _, e := range l.rec.events {
		if e.msg == msg && !e.at.Before(since) {
			return e.at, true
		}
	}
	return time.Time{}, false
}

// count returns how many records with message msg came at or after since.
func (l *eventLog) count(msg string, since time.Time) int {
	l.rec.mu.Lock()
	defer l.rec.mu.Unlock()
	n := 0
	for _, e := range l.rec.events {
		if e.msg == msg && !e.at.Before(since) {
			n++
		}
	}
	return n
}

// dump returns every record at or after since, one a line, with its time
// from since.
func (l *eventLog) dump(since time.Time) []string {
	l.rec.mu.Lock()
	defer l.rec.mu.Unlock()
	var out []string
	for _, e := range l.rec.events {
		if !e.at.Before(since) {
			out = append(out, fmt.Sprintf("%v %s %s/%d %s%s", e.at.Sub(since), e.msg, e.topic, e.partition, e.err, e.rest))
		}
	}
	return out
}

// scan calls fn for each record from index from on, in the order they
// were kept, and returns the index after the last: the next scan's from.
// fn runs under the log's lock: it must be quick.
func (l *eventLog) scan(from int, fn func(scaleEvent)) int {
	l.rec.mu.Lock()
	defer l.rec.mu.Unlock()
	for _, e := range l.rec.events[from:] {
		fn(e)
	}
	return len(l.rec.events)
}
