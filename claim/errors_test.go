package claim

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/cenkalti/backoff/v4"

	"github.com/zkgroup/kafka/kazoo"
)

func TestClassifier(t *testing.T) {
	wrap := func(err error) error { return fmt.Errorf("ctx: %w", err) }
	cases := []struct {
		err                  error
		retryable, permanent bool
	}{
		{nil, false, false},
		{kazoo.ErrPartitionClaimedByOther, true, false},
		{wrap(kazoo.ErrNoNode), true, false},
		{wrap(kazoo.ErrNodeExists), true, false},
		{wrap(kazoo.ErrConnectionClosed), true, false},
		{wrap(kazoo.ErrSessionExpired), true, false},
		{wrap(kazoo.ErrNoServer), true, false},
		{errors.New("something we do not know"), true, false},
		{&kazoo.ZnodeError{Op: "create", Path: "/x", Err: kazoo.ErrNoAuth}, false, true},
		{wrap(kazoo.ErrAuthFailed), false, true},
		{wrap(kazoo.ErrInvalidACL), false, true},
		{wrap(kazoo.ErrBadArguments), false, true},
		{wrap(kazoo.ErrMalformed), false, true},
		{kazoo.ErrClosing, false, true},
		{Permanent(errors.New("x")), false, true},
		{wrap(backoff.Permanent(kazoo.ErrConnectionClosed)), false, true},
		{wrap(kazoo.ErrClaimLost), false, false},
		{wrap(kazoo.ErrPartitionNotClaimed), false, false},
		{&kazoo.OffsetConflictError{}, false, false},
		{context.Canceled, false, false},
		{wrap(context.DeadlineExceeded), false, false},
		{&Error{Cause: kazoo.ErrPartitionClaimedByOther}, true, false},
		{&Error{Cause: kazoo.ErrNoAuth}, false, true},
	}
	for _, tc := range cases {
		if got := IsRetryable(tc.err); got != tc.retryable {
			t.Errorf("IsRetryable(%v) = %v, want %v", tc.err, got, tc.retryable)
		}
		if got := IsPermanent(tc.err); got != tc.permanent {
			t.Errorf("IsPermanent(%v) = %v, want %v", tc.err, got, tc.permanent)
		}
	}
	if Permanent(nil) != nil {
		t.Error("Permanent(nil) != nil")
	}
}

func TestErrorMessageAndUnwrap(t *testing.T) {
	e := &Error{Topic: "t", Partition: 7, Attempts: 42, Elapsed: 70 * time.Second, Cause: kazoo.ErrPartitionClaimedByOther}
	for _, want := range []string{"t/7", "gave up", "42 attempts", "1m10s", "already claimed"} {
		if !strings.Contains(e.Error(), want) {
			t.Errorf("%q lacks %q", e.Error(), want)
		}
	}
	if !errors.Is(e, kazoo.ErrPartitionClaimedByOther) {
		t.Error("errors.Is through *Error failed")
	}
	p := &Error{Topic: "t", Partition: 7, Attempts: 1, Cause: kazoo.ErrNoAuth}
	if !strings.Contains(p.Error(), "permanent") {
		t.Errorf("%q does not say permanent", p.Error())
	}
}

func TestNotifyChanNeverBlocks(t *testing.T) {
	var dropped int
	full := make(chan error) // unbuffered, nobody reads
	NotifyChan(full, func(*Error) { dropped++ })(&Error{})
	NotifyChan(nil, nil)(&Error{}) // nil channel, nil dropped: still returns
	ch := make(chan error, 1)
	NotifyChan(ch, func(*Error) { dropped++ })(&Error{Partition: 1})
	if dropped != 1 || len(ch) != 1 {
		t.Errorf("dropped %d, delivered %d; want 1, 1", dropped, len(ch))
	}
}
