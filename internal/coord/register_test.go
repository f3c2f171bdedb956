package coord

import (
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"testing"
	"testing/synctest"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zkgroup/kafka/kazoo"
)

// scriptedRegister answers registrations with errs in turn (nil beyond)
// and records when each was made; onCall runs before each answer.
type scriptedRegister struct {
	errs   []error
	at     []time.Time
	onCall func(n int)
}

func (r *scriptedRegister) register() error {
	n := len(r.at)
	r.at = append(r.at, time.Now())
	if r.onCall != nil {
		r.onCall(n + 1)
	}
	if n < len(r.errs) {
		return r.errs[n]
	}
	return nil
}

// waits returns the time between consecutive registrations.
func (r *scriptedRegister) waits() []time.Duration {
	var out []time.Duration
	for i := 1; i < len(r.at); i++ {
		out = append(out, r.at[i].Sub(r.at[i-1]))
	}
	return out
}

func lostReply(i int) error { return fmt.Errorf("register %d: %w", i, zk.ErrConnectionClosed) }

func TestRegisterRetries(t *testing.T) {
	ms := time.Millisecond
	refused := errors.New("no such group")
	for _, c := range []struct {
		name    string
		errs    []error
		timeout time.Duration
		waits   []time.Duration
		want    error // nil: registered
	}{
		{name: "at once", timeout: time.Minute},
		{name: "after lost replies, doubling the wait up to a second",
			errs:    []error{lostReply(1), lostReply(2), lostReply(3), lostReply(4), lostReply(5), lostReply(6)},
			timeout: time.Minute, waits: []time.Duration{100 * ms, 200 * ms, 400 * ms, 800 * ms, time.Second, time.Second}},
		{name: "an earlier attempt was applied", errs: []error{lostReply(1), kazoo.ErrInstanceAlreadyRegistered},
			timeout: time.Minute, waits: []time.Duration{100 * ms}},
		{name: "an error retrying does not mend is not retried", errs: []error{refused},
			timeout: time.Minute, want: refused},
		{name: "no retry once the timeout passed", errs: []error{lostReply(1), lostReply(2), lostReply(3), lostReply(4), lostReply(5), lostReply(6)},
			timeout: time.Second, waits: []time.Duration{100 * ms, 200 * ms, 400 * ms, 800 * ms}, want: lostReply(5)},
	} {
		t.Run(c.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				r := &scriptedRegister{errs: c.errs}
				err := Register(r.register, c.timeout, make(chan struct{}), slog.New(slog.DiscardHandler))
				if fmt.Sprint(err) != fmt.Sprint(c.want) {
					t.Errorf("Register = %v, want %v", err, c.want)
				}
				if got := r.waits(); !slices.Equal(got, c.waits) {
					t.Errorf("waits %v, want %v", got, c.waits)
				}
			})
		})
	}
}

// A closed stop ends the waits at once; Register returns the last
// attempt's error, not the cancellation.
func TestRegisterStops(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		stop := make(chan struct{})
		errs := []error{lostReply(1), lostReply(2), lostReply(3)}
		r := &scriptedRegister{errs: errs, onCall: func(n int) {
			if n == 2 {
				close(stop)
			}
		}}
		start := time.Now()
		err := Register(r.register, time.Minute, stop, slog.New(slog.DiscardHandler))
		if err != errs[1] {
			t.Errorf("Register = %v, want %v", err, errs[1])
		}
		if len(r.at) != 2 {
			t.Errorf("%d attempts, want 2", len(r.at))
		}
		if took := time.Since(start); took != 100*time.Millisecond {
			t.Errorf("returned %v after the first attempt, want right after the second (100ms)", took)
		}
	})
}
