package coord

import (
	"errors"
	"fmt"
	"time"

	"github.com/zkgroup/kafka/internal/assign"
	"github.com/zkgroup/kafka/internal/zkwatch"
	"github.com/zkgroup/kafka/kazoo"
)

// Reservations is what the loop reads and deletes of static members'
// reservations (kazoo.StaticMember): a static member that left keeps its
// share for its grace window, so it gets the same partitions back when it
// returns. docs/static-members.md has the protocol.
type Reservations interface {
	// Reserved returns the ids of the reservations, present members' too.
	Reserved() ([]string, error)
	// WatchReserved is Reserved plus a watch on the list.
	WatchReserved() ([]string, <-chan kazoo.Event, error)
	// Reservation reads one: an error wrapping kazoo.ErrNoReservation when
	// it is gone, kazoo.ErrMalformed when it cannot be parsed.
	Reservation(id string) (*kazoo.StaticMember, error)
	// DeleteReservation deletes it if still at version: an error wrapping
	// kazoo.ErrNoReservation when it is gone or was written again.
	DeleteReservation(id string, version int32) error
}

// absence is when this instance first saw a static member absent, with
// the zxid of its reservation's last write then: a member that comes back
// writes its reservation again, so a later absence has another zxid and
// is timed afresh. Not the version: a node deleted and created again
// starts at version 0 again.
type absence struct {
	zxid  int64
	since time.Time
}

// readReservations returns the members that are absent but reserved
// (their reservation exists and its grace window, timed from when this
// instance first saw them absent, has not ended), and the earliest end of
// those windows (zero when none). It deletes, fenced by version, each
// reservation whose window ended, so every instance's view drops it
// together when the deletion is seen (the watch on the list).
//
// The window is timed on this instance's clock from when it saw the
// absence, not from a time written by the member (a crash writes nothing)
// nor compared with another host's clock; the first instance whose window
// ends deletes the reservation for all.
func (l *Loop) readReservations(ws loopWatches, live map[string]bool, absent map[string]absence, now time.Time) ([]assign.Member, time.Time, error) {
	var next time.Time
	r := l.d.Reservations
	if r == nil {
		return nil, next, nil
	}
	ids, err := zkwatch.Read(ws.set, "static", r.Reserved, r.WatchReserved)
	if err != nil {
		return nil, next, fmt.Errorf("list static members: %w", err)
	}
	listed := make(map[string]bool, len(ids))
	var reserved []assign.Member
	for _, id := range ids {
		listed[id] = true
		if live[id] {
			delete(absent, id)
			continue
		}
		res, err := r.Reservation(id)
		switch {
		case errors.Is(err, kazoo.ErrNoReservation):
			continue // deleted since the listing: its watch wakes the loop
		case errors.Is(err, kazoo.ErrMalformed), errors.Is(err, kazoo.ErrNoAuth):
			// Never readable (a bad node, or its ACL): failing the view
			// would hold every rebalance back for good.
			l.d.Log.Warn("unreadable reservation: its member keeps no share", "instance", id, "err", err)
			continue
		case err != nil:
			return nil, next, fmt.Errorf("reservation of %s: %w", id, err)
		}
		a, seen := absent[id]
		if !seen || a.zxid != res.Mzxid {
			a = absence{zxid: res.Mzxid, since: now}
			absent[id] = a
		}
		end := a.since.Add(res.GraceWindow)
		if !now.Before(end) {
			err := r.DeleteReservation(id, res.Version)
			if err == nil {
				l.d.Log.Info("grace window of an absent static member ended; its partitions move", "instance", id)
				delete(absent, id)
				continue
			}
			if errors.Is(err, kazoo.ErrNoAuth) || errors.Is(err, kazoo.ErrNotEmpty) {
				// Never deletable (its ACL, or a child an operator made):
				// the window ended all the same, here as on every other
				// instance whose window ends.
				l.d.Log.Warn("the reservation of an absent static member cannot be deleted; its window ended, its partitions move",
					"instance", id, "err", err)
				continue
			}
			if !errors.Is(err, kazoo.ErrNoReservation) {
				return nil, next, fmt.Errorf("delete the reservation of %s: %w", id, err)
			}
			// Deleted by another instance, or written again by the member:
			// keep it for now and read again at once.
			delete(absent, id)
			end = now
		}
		m, err := reservedMember(id, res.Registration)
		if err != nil {
			l.d.Log.Warn("unreadable reservation: its member keeps no share", "instance", id, "err", err)
			continue
		}
		reserved = append(reserved, m)
		if next.IsZero() || end.Before(next) {
			next = end
		}
	}
	for id := range absent {
		if !listed[id] {
			delete(absent, id)
		}
	}
	return reserved, next, nil
}

// reservedMember is the absent static member id as the assignment sees it,
// from the registration its reservation keeps: its subscription, and the
// strategies it offered, so a group on the sticky assignment stays on it
// (and keeps the absent member's share where it was) during the window.
func reservedMember(id string, reg *kazoo.Registration) (assign.Member, error) {
	sub, err := assign.ParseSubscription(reg)
	if err != nil {
		return assign.Member{}, err
	}
	return assign.Member{ID: id, Sub: sub, Offers: assign.OfferedBy(reg)}, nil
}
