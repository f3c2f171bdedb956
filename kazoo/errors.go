package kazoo

import (
	"errors"
	"fmt"

	"github.com/go-zookeeper/zk"
)

// ZooKeeper's own errors, re-exported so callers can use errors.Is without
// importing the ZooKeeper client. Errors returned by this package wrap them.
var (
	ErrNoNode           = zk.ErrNoNode
	ErrNodeExists       = zk.ErrNodeExists
	ErrBadVersion       = zk.ErrBadVersion
	ErrNotEmpty         = zk.ErrNotEmpty
	ErrNoAuth           = zk.ErrNoAuth
	ErrAuthFailed       = zk.ErrAuthFailed
	ErrInvalidACL       = zk.ErrInvalidACL
	ErrBadArguments     = zk.ErrBadArguments
	ErrSessionExpired   = zk.ErrSessionExpired
	ErrSessionMoved     = zk.ErrSessionMoved
	ErrConnectionClosed = zk.ErrConnectionClosed
	ErrNoServer         = zk.ErrNoServer
	ErrClosing          = zk.ErrClosing
)

// FailedToClaimPartition is kazoo-go's error for an instance that could not
// claim a partition. kazoo-go declared it without returning it, and so does
// this package: it is here so that code naming it compiles. Claims that
// fail return ErrPartitionClaimedByOther.
var FailedToClaimPartition = errors.New("kazoo: failed to claim partition for this consumer instance; is another consumer with this id running?")

// ErrMalformed marks a znode whose content cannot be parsed. It is always
// wrapped in a *ZnodeError naming the path.
var ErrMalformed = errors.New("malformed znode")

// ZnodeError is an error about one znode: the operation, the full path
// (chroot included) and the cause.
type ZnodeError struct {
	Op   string // "get", "create", "parse", ...
	Path string
	Err  error
}

func (e *ZnodeError) Error() string {
	return fmt.Sprintf("kazoo: %s %s: %v", e.Op, e.Path, e.Err)
}

// Unwrap returns the cause.
func (e *ZnodeError) Unwrap() error { return e.Err }

func znodeErr(op, path string, err error) error {
	if err == nil {
		return nil
	}
	return &ZnodeError{Op: op, Path: path, Err: err}
}

func malformed(path, format string, args ...any) error {
	return &ZnodeError{Op: "parse", Path: path, Err: fmt.Errorf("%w: "+format, append([]any{ErrMalformed}, args...)...)}
}

// IsRetryable reports whether err is a transient ZooKeeper condition (a lost
// connection, a server switch, an expired session being replaced) after
// which the same operation may succeed. Authentication and ACL failures,
// bad arguments and malformed data are permanent.
func IsRetryable(err error) bool {
	switch {
	case err == nil:
		return false
	case errors.Is(err, zk.ErrConnectionClosed), errors.Is(err, zk.ErrNoServer),
		errors.Is(err, zk.ErrSessionExpired), errors.Is(err, zk.ErrSessionMoved),
		errors.Is(err, ErrClaimContended):
		return true
	}
	return false
}
