package coord

import (
	"errors"
	"log/slog"
	"time"

	"github.com/zkgroup/kafka/kazoo"
)

// Register registers the instance through register, and again while the
// outcome is in doubt.
//
// A registration whose reply was lost (the connection dropped, a leader
// election) is in doubt: it is tried again, a few times within timeout,
// and finding the node then (kazoo.ErrInstanceAlreadyRegistered) means the
// first attempt was applied. A closed stop ends the retries.
func Register(register func() error, timeout time.Duration, stop <-chan struct{}, log *slog.Logger) error {
	deadline := time.Now().Add(timeout)
	for attempt := 1; ; attempt++ {
		err := register()
		if errors.Is(err, kazoo.ErrInstanceAlreadyRegistered) {
			// Held by this session already (maybe an earlier attempt whose
			// reply was lost), or by an older session of ours about to
			// expire: its deletion wakes the loop, which registers again.
			return nil
		}
		if err == nil || !kazoo.IsRetryable(err) || time.Now().After(deadline) {
			return err
		}
		log.Warn("registering failed; trying again", "attempt", attempt, "err", err)
		select {
		case <-stop:
			return err
		case <-time.After(min(time.Duration(attempt)*100*time.Millisecond, time.Second)):
		}
	}
}

// register registers the instance again (after an expiry, or a deleted
// registration).
func (l *Loop) register() error {
	return Register(l.d.ZooKeeper.Register, l.cfg.RegisterTimeout, l.d.Stop, l.d.Log)
}
