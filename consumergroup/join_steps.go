package consumergroup

import (
	"log/slog"
	"time"
)

// joinSteps times the steps of a join (the ZooKeeper session; the broker
// list and the Kafka client; the offset stores and the topic source; the
// group's nodes and the registration), which the "joined consumer group"
// record carries: a slow join then says which step was slow
// (docs/performance.md, "Scale").
type joinSteps struct {
	last  time.Time
	names []string
	took  []time.Duration
}

// start begins timing and returns s, for done.
func (s *joinSteps) start() *joinSteps {
	s.last = time.Now()
	return s
}

// done ends the step named name, begun when the previous one ended.
func (s *joinSteps) done(name string) {
	now := time.Now()
	s.names = append(s.names, name)
	s.took = append(s.took, now.Sub(s.last))
	s.last = now
}

// attrs are the steps as a log group: name=duration, in order.
func (s *joinSteps) attrs() slog.Value {
	attrs := make([]slog.Attr, len(s.names))
	for i, name := range s.names {
		attrs[i] = slog.Duration(name, s.took[i])
	}
	return slog.GroupValue(attrs...)
}
