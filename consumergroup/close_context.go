package consumergroup

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/zkgroup/kafka/internal/worker"
)

// A close bounded by its caller. CloseContext's context ending acts as
// Close's own deadline firing early: the drains end at once (the worker
// commits what was marked, then releases), and a quarter of the session
// timeout later the session is closed, which ends every wait for
// ZooKeeper and Kafka and deletes the registration and the owner nodes.
// docs/shutdown.md has the order, the bounds and the settings for a pod.

// What a close cut short, as CloseCutShortError.CutShort names it.
const (
	cutDrains   = "waiting for delivered messages to be marked (the drain)"
	cutSession  = "the last commits and releases: the ZooKeeper session was closed, deleting the registration and the owner nodes"
	cutHandlers = "waiting for the handler's Setup, ConsumeClaim or Cleanup to return (Consume returns, and Errors() closes, once they do)"
)

// CloseCutShortError is returned by CloseContext when its context ended
// before the orderly close finished. The close still ended safely:
// nothing was committed after a partition's release, and the session's
// end deleted what a release did not. It matches the context's error
// (context.DeadlineExceeded or context.Canceled) and its cause with
// errors.Is.
type CloseCutShortError struct {
	// Err is the context's error; Cause is context.Cause of it (the same
	// unless the context was given a cause).
	Err, Cause error
	// CutShort names, in order, what the close stopped waiting for; empty
	// when the close finished within the short time it is given after the
	// context's end.
	CutShort []string
}

func newCloseCutShortError(ctx context.Context, cutShort []string) *CloseCutShortError {
	return &CloseCutShortError{Err: ctx.Err(), Cause: context.Cause(ctx), CutShort: cutShort}
}

func (e *CloseCutShortError) Error() string {
	why := e.Err.Error()
	if e.Cause != nil && e.Cause != e.Err {
		why += ": " + e.Cause.Error()
	}
	if len(e.CutShort) == 0 {
		return fmt.Sprintf("consumergroup: close outlasted its context (%s); nothing was cut short", why)
	}
	return fmt.Sprintf("consumergroup: close cut short by its context (%s): stopped %s", why, strings.Join(e.CutShort, "; "))
}

// Unwrap returns the context's error and its cause.
func (e *CloseCutShortError) Unwrap() []error {
	if e.Cause == nil || e.Cause == e.Err {
		return []error{e.Err}
	}
	return []error{e.Err, e.Cause}
}

// closeWatch hurries a close once its context ends (see watchClose).
type closeWatch struct {
	ctx      context.Context
	cg       *ConsumerGroup
	finished chan struct{} // closed by stop: the close no longer needs hurrying
	ended    chan struct{} // closed when the watching goroutine returns
	ctxEnded bool          // written by the goroutine, read after ended
	cutShort []string      // likewise
}

// watchClose watches ctx for the close: when it ends before stop, the
// drains are cut short, and a quarter of the session timeout later (the
// time a commit or a release takes when ZooKeeper answers) the session is
// closed, as when Close's own deadline passes. A context that never ends
// costs no goroutine.
func (cg *ConsumerGroup) watchClose(ctx context.Context) *closeWatch {
	w := &closeWatch{ctx: ctx, cg: cg, finished: make(chan struct{}), ended: make(chan struct{})}
	if ctx.Done() == nil {
		close(w.ended)
		return w
	}
	go func() {
		defer close(w.ended)
		select {
		case <-w.finished:
			return
		case <-ctx.Done():
		}
		w.ctxEnded = true
		if !isClosed(cg.done) {
			cg.log.Warn("Close's context ended: no more waiting for marks", "cause", context.Cause(ctx))
			cg.cutDrains()
		}
		grace := time.NewTimer(cg.closeGrace())
		defer grace.Stop()
		select {
		case <-w.finished:
			return
		case <-grace.C:
		}
		cg.log.Warn("Close's context ended: closing the session to end the last commits and releases")
		w.cutShort = append(w.cutShort, cutSession)
		cg.expireClose()
		_ = cg.kazoo.Close()
	}()
	return w
}

// stop ends the watch and returns the error saying what the context's
// end cut short, or nil if it did not end before the close was done.
// Called once the partitions have stopped: the drains the cut ended
// with messages unmarked have said so by then.
func (w *closeWatch) stop() error {
	close(w.finished)
	<-w.ended
	if !w.ctxEnded {
		return nil
	}
	cutShort := w.cutShort
	if w.cg.drainLeftMarks.Load() {
		cutShort = append([]string{cutDrains}, cutShort...)
	}
	return newCloseCutShortError(w.ctx, cutShort)
}

// reportWorkerPartition is reportPartition for the workers. A drain that
// CloseContext's context ended with messages unmarked reports them
// (worker.ErrDrainCutShort), and only then did the close cut a drain
// short: one that was over, or had every message marked, cut nothing.
func (cg *ConsumerGroup) reportWorkerPartition(topic string, partition int32, err error) {
	if errors.Is(err, worker.ErrDrainCutShort) {
		cg.drainLeftMarks.Store(true)
	}
	cg.reportPartition(topic, partition, err)
}

// closeGrace is how long a close cut short by its context still waits for
// ZooKeeper and Kafka: a quarter of the session timeout, as the last
// commit round and deregistering each wait at most.
func (cg *ConsumerGroup) closeGrace() time.Duration {
	return cg.config.Zookeeper.Timeout / 4
}

// cutDrains ends every drain at once (worker.Deps.DrainsCut).
func (cg *ConsumerGroup) cutDrains() {
	cg.cutOnce.Do(func() { close(cg.drainsCut) })
}

// closeErrorWith returns the error of a close: cut, if the context cut it
// short, joined with errs.
func closeErrorWith(cut error, errs []error) error {
	if cut == nil {
		return errors.Join(errs...)
	}
	if len(errs) == 0 {
		return cut
	}
	return errors.Join(append([]error{cut}, errs...)...)
}

func isClosed(c <-chan struct{}) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}
