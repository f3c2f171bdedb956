package monitor

import (
	"context"
	"log/slog"
	"time"
)

// Deps is what the monitors read and set.
type Deps struct {
	Session       Session       // the ZooKeeper session the watch follows
	SessionGauges SessionGauges // set by the session watch
	Owned         Owned         // the partitions whose lag the refresh keeps
	Leaders       Leaders       // their leaders
	Offsets       ListOffsets   // the leaders' high-water marks
	Lag           LagGauges     // set by the lag refresh
	Log           *slog.Logger
}

// Monitors are one group's running monitors: the session watch and,
// when enabled, the lag refresh.
type Monitors struct {
	stopLag   context.CancelFunc
	lagDone   chan struct{} // closed when the lag refresh has ended
	watchDone chan struct{} // closed when the session watch has ended
}

// Start starts the session watch and, when lagEvery (Metrics.LagInterval)
// is above 0, the lag refresh every lagEvery. The watch ends when the
// session is closed, the refresh at Stop. With lagEvery 0, deps.Owned,
// deps.Leaders, deps.Offsets and deps.Lag are not used and may be nil.
func Start(lagEvery time.Duration, deps Deps) *Monitors {
	ctx, cancel := context.WithCancel(context.Background())
	m := &Monitors{stopLag: cancel, lagDone: make(chan struct{}), watchDone: make(chan struct{})}
	// A HandlerGroup's previous session may have ended fenced.
	deps.SessionGauges.ClearFenced()
	go func() {
		defer close(m.watchDone)
		watchSession(deps.Session, deps.SessionGauges)
	}()
	if lagEvery <= 0 {
		close(m.lagDone)
		return m
	}
	r := &lagRefresh{owned: deps.Owned, leaders: deps.Leaders, offsets: deps.Offsets, gauges: deps.Lag, log: deps.Log}
	go func() {
		defer close(m.lagDone)
		r.every(ctx, lagEvery)
	}()
	return m
}

// Stop ends the lag refresh and waits for it. A lookup or ListOffsets
// request in flight is cancelled rather than waited for (see Kafka), so
// Stop does not wait on a broker; no lag gauge is set once it has
// returned. Calling it again does nothing more.
func (m *Monitors) Stop() {
	m.stopLag()
	<-m.lagDone
}

// AwaitSessionWatch waits for the session watch, which ends once the
// session is closed: the session gauges then show it closed.
func (m *Monitors) AwaitSessionWatch() {
	<-m.watchDone
}
