package kazoo

import (
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/go-zookeeper/zk"
)

// ConsumergroupInstance is one member of a consumer group. Get it from
// Consumergroup.NewInstance or Consumergroup.Instance. Its registration and
// claims belong to the ZooKeeper session of the Kazoo it came from: an
// owner node counts as this instance's only if it holds ID and its
// Stat.EphemeralOwner is that session. Every method checks ID with
// ValidateInstanceID first.
type ConsumergroupInstance struct {
	cg *Consumergroup
	ID string

	// static is set on handles from Consumergroup.StaticInstance: their
	// registration also keeps the reservation node (static_member.go).
	static      bool
	graceWindow time.Duration
}

func (cgi *ConsumergroupInstance) check() error {
	if cgi == nil || cgi.cg == nil {
		return errors.New("kazoo: ConsumergroupInstance handle was not obtained from a Consumergroup (use Consumergroup.Instance)")
	}
	if err := cgi.cg.check(); err != nil {
		return err
	}
	return ValidateInstanceID(cgi.ID)
}

func (cgi *ConsumergroupInstance) kz() *Kazoo { return cgi.cg.kz }

func (cgi *ConsumergroupInstance) regPath() string {
	return cgi.cg.kz.instancePath(cgi.cg.Name, cgi.ID)
}

// Registered reports whether an instance with this id is registered (by any
// session).
func (cgi *ConsumergroupInstance) Registered() (bool, error) {
	if err := cgi.check(); err != nil {
		return false, err
	}
	return cgi.kz().exists(cgi.regPath())
}

// Registration returns the instance's registration. If it is not
// registered it returns ErrInstanceNotRegistered (bare, as kazoo-go); a
// registration that cannot be parsed gives an error naming the path and
// wrapping ErrMalformed.
func (cgi *ConsumergroupInstance) Registration() (*Registration, error) {
	if err := cgi.check(); err != nil {
		return nil, err
	}
	node := cgi.regPath()
	data, _, err := cgi.kz().conn.Get(node)
	if errors.Is(err, zk.ErrNoNode) {
		return nil, ErrInstanceNotRegistered
	} else if err != nil {
		return nil, znodeErr("get", node, err)
	}
	return parseRegistration(node, data)
}

// WatchRegistration is Registration plus a watch on the registration node:
// the channel receives one Event when it changes or is deleted (or
// EventNotWatching when the watch is lost) and is then closed. If the
// instance is not registered it returns nil, nil, ErrInstanceNotRegistered
// (bare, as kazoo-go): register, then watch again. A registration that
// cannot be parsed gives its parse error together with the watch, so a
// caller learns when it is fixed.
func (cgi *ConsumergroupInstance) WatchRegistration() (*Registration, <-chan Event, error) {
	if err := cgi.check(); err != nil {
		return nil, nil, err
	}
	node := cgi.regPath()
	data, _, w, err := cgi.kz().conn.GetW(node)
	if errors.Is(err, zk.ErrNoNode) {
		return nil, nil, ErrInstanceNotRegistered
	} else if err != nil {
		return nil, nil, znodeErr("get", node, err)
	}
	reg, err := parseRegistration(node, data)
	if err != nil {
		return nil, w, err
	}
	return reg, w, nil
}

// RegisterWithSubscription registers the instance: it creates the
// ephemeral node /consumers/<group>/ids/<id> (and its parents) holding
// subscriptionJSON; a static instance writes its reservation in the same
// transaction (registerStatic). If the node exists it returns
// ErrInstanceAlreadyRegistered (bare, as kazoo-go) and logs which session
// holds it.
func (cgi *ConsumergroupInstance) RegisterWithSubscription(subscriptionJSON []byte) error {
	if err := cgi.check(); err != nil {
		return err
	}
	node := cgi.regPath()
	var err error
	if cgi.static {
		err = cgi.registerStatic(node, subscriptionJSON)
	} else {
		err = cgi.kz().create(node, subscriptionJSON, true)
	}
	if errors.Is(err, ErrNodeExists) {
		detail := ""
		ok, stat, e := cgi.kz().conn.Exists(node)
		if e == nil && ok {
			detail = fmt.Sprintf(" by session %#x (this client's is %#x)", stat.EphemeralOwner, cgi.kz().SessionID())
		}
		cgi.kz().logf("%s is registered already%s", node, detail)
		if !cgi.static {
			return ErrInstanceAlreadyRegistered
		}
		if e != nil {
			return znodeErr("exists", node, e)
		}
		if ok && stat.EphemeralOwner != cgi.kz().SessionID() {
			return fmt.Errorf("%w: %s is registered by session %#x, this client's is %#x",
				ErrFencedInstanceID, node, stat.EphemeralOwner, cgi.kz().SessionID())
		}
		if !ok {
			// Gone since the create: whoever held it left; the caller tries again.
			return znodeErr("create", node, fmt.Errorf("%w: the registration vanished meanwhile", ErrClaimContended))
		}
		// Ours already: an earlier attempt whose reply was lost, which
		// wrote the reservation with the node. Report it as kazoo-go would.
		err = ErrInstanceAlreadyRegistered
	} else if err != nil {
		return err
	}
	_ = cgi.cg.hook(stepRegistered)
	cgi.kz().registered.Store(node, true)
	return err
}

// Register registers the instance with a static subscription to topics
// (one stream each), in the registration format of Kafka's high-level
// consumer. See RegisterWithSubscription.
func (cgi *ConsumergroupInstance) Register(topics []string) error {
	data, err := staticRegistration(topics)
	if err != nil {
		return err
	}
	return cgi.RegisterWithSubscription(data)
}

// UpdateRegistration replaces the subscription of the registered instance
// with a static subscription to topics. It returns ErrInstanceNotRegistered
// (bare) if the instance is not registered by this client's session. A
// static instance with a grace window writes its reservation's copy of
// the registration in the same transaction, so that its share while away
// is computed from the topics it consumes now.
func (cgi *ConsumergroupInstance) UpdateRegistration(topics []string) error {
	if err := cgi.check(); err != nil {
		return err
	}
	data, err := staticRegistration(topics)
	if err != nil {
		return err
	}
	var reservation []byte // the reservation's new copy; nil: none to write
	if cgi.static && cgi.graceWindow > 0 {
		if reservation, err = cgi.reservationData(data); err != nil {
			return err
		}
	}
	rpath := cgi.kz().staticMemberPath(cgi.cg.Name, cgi.ID)
	return cgi.onOwnRegistration("set", func(conn *zk.Conn, node string, version int32) error {
		if reservation == nil {
			_, err := conn.Set(node, data, version)
			return err
		}
		resp, err := conn.Multi(
			&zk.SetDataRequest{Path: node, Data: data, Version: version},
			&zk.SetDataRequest{Path: rpath, Data: reservation, Version: -1})
		if err != nil && failedOp(resp) == 1 {
			// The reservation, written with the registration, is gone
			// although the member is registered: deleted by hand.
			return fmt.Errorf("%w: %w", ErrNoReservation, znodeErr("set", rpath, err))
		}
		return err
	})
}

// Deregister deletes the instance's registration, with its exact version
// and only if this client's session created it. Otherwise it returns
// ErrInstanceNotRegistered (bare).
func (cgi *ConsumergroupInstance) Deregister() error {
	if err := cgi.check(); err != nil {
		return err
	}
	cgi.kz().registered.Delete(cgi.regPath()) // before: a release after it reads, whatever Delete answers
	return cgi.onOwnRegistration("delete", func(conn *zk.Conn, node string, version int32) error {
		return conn.Delete(node, version)
	})
}

// releasesUnread reports whether this client registered the instance (and
// has not deregistered it) under session sid, the current one: only then
// may a release skip reading the owner node (see releaseOps).
func (cgi *ConsumergroupInstance) releasesUnread(sid int64) bool {
	_, ok := cgi.kz().registered.Load(cgi.regPath())
	return ok && sid == cgi.kz().SessionID()
}

// onOwnRegistration runs op (a set or delete at the node's exact version)
// on the registration node, only if this client's session created it. A
// version that moved meanwhile makes it look again, up to three times.
func (cgi *ConsumergroupInstance) onOwnRegistration(what string, op func(conn *zk.Conn, node string, version int32) error) error {
	node := cgi.regPath()
	conn := cgi.kz().conn
	for range 3 {
		ok, stat, err := conn.Exists(node)
		if err != nil {
			return znodeErr("exists", node, err)
		}
		if err := cgi.ownRegistration(node, ok, stat); err != nil {
			return err
		}
		err = op(conn, node, stat.Version)
		if errors.Is(err, zk.ErrBadVersion) {
			continue // changed meanwhile: look again
		} else if errors.Is(err, zk.ErrNoNode) {
			cgi.kz().logf("%s %s: the registration is gone", what, node)
			return ErrInstanceNotRegistered
		}
		return znodeErr(what, node, err)
	}
	return znodeErr(what, node, fmt.Errorf("%w: registration kept changing", ErrClaimContended))
}

// ownRegistration returns ErrInstanceNotRegistered unless the registration
// node exists and belongs to this client's session.
func (cgi *ConsumergroupInstance) ownRegistration(node string, ok bool, stat *zk.Stat) error {
	if !ok {
		cgi.kz().logf("%s is not registered", node)
		return ErrInstanceNotRegistered
	}
	if sid := cgi.kz().SessionID(); stat.EphemeralOwner != sid {
		cgi.kz().logf("%s is registered by session %#x, not this client's (%#x)", node, stat.EphemeralOwner, sid)
		return ErrInstanceNotRegistered
	}
	return nil
}

// ClaimPartition claims the partition for this instance; see Claim, which it
// calls, discarding the claim. Claiming a partition this instance already
// owns succeeds. If another instance owns it, it returns
// ErrPartitionClaimedByOther (bare, as kazoo-go; the owner is logged).
//
// Unlike kazoo-go it tolerates the owner vanishing while it looks, and
// decides ownership by the owner node's session, not by its data.
func (cgi *ConsumergroupInstance) ClaimPartition(topic string, partition int32) error {
	_, err := cgi.Claim(topic, partition)
	if errors.Is(err, ErrPartitionClaimedByOther) {
		cgi.kz().logf("claim partition: %v", err)
		return ErrPartitionClaimedByOther
	}
	return err
}

// ReleasePartition deletes the partition's owner node if this instance owns
// it under this client's session; otherwise it returns
// ErrPartitionNotClaimed (bare, as kazoo-go; the owner is logged). The
// delete uses the node's exact version and is fenced by the partition's
// epoch, so a late release cannot delete the node of an owner that claimed
// meanwhile. Prefer Release with the claim.
func (cgi *ConsumergroupInstance) ReleasePartition(topic string, partition int32) error {
	if err := cgi.check(); err != nil {
		return err
	}
	if err := checkTopicPartition(topic, partition); err != nil {
		return err
	}
	kz := cgi.kz()
	owner := kz.ownerPath(cgi.cg.Name, topic, partition)
	epoch := kz.epochPath(cgi.cg.Name, topic, partition)
	for range claimAttempts {
		// The epoch first: any claim after this read moves it.
		hasEpoch, estat, err := kz.conn.Exists(epoch)
		if err != nil {
			return znodeErr("exists", epoch, err)
		}
		data, stat, err := kz.conn.Get(owner)
		if errors.Is(err, zk.ErrNoNode) {
			kz.logf("release %s: it has no owner", owner)
			return ErrPartitionNotClaimed
		} else if err != nil {
			return znodeErr("get", owner, err)
		}
		if sid := kz.SessionID(); string(data) != cgi.ID || stat.EphemeralOwner != sid {
			kz.logf("release %s: it is owned by %q (session %#x), not %q (session %#x)",
				owner, data, stat.EphemeralOwner, cgi.ID, sid)
			return ErrPartitionNotClaimed
		}
		if err := cgi.cg.hook(stepReleaseDelete); err != nil {
			return znodeErr("delete", owner, err)
		}
		ops := []any{&zk.DeleteRequest{Path: owner, Version: stat.Version}}
		if hasEpoch {
			ops = append([]any{&zk.CheckVersionRequest{Path: epoch, Version: estat.Version}}, ops...)
		} // else: claimed by a client that keeps no epochs; nothing to fence with
		resp, err := kz.conn.Multi(ops...)
		if err == nil {
			return nil
		}
		if failedOp(resp) < 0 || !(errors.Is(err, zk.ErrBadVersion) || errors.Is(err, zk.ErrNoNode)) {
			return znodeErr("delete", owner, err)
		}
		// The epoch moved or the node changed: look again.
	}
	return znodeErr("delete", owner, fmt.Errorf("%w: owner kept changing", ErrClaimContended))
}

func staticRegistration(topics []string) ([]byte, error) {
	subscription := make(map[string]int, len(topics))
	for _, topic := range topics {
		subscription[topic] = 1
	}
	return json.Marshal(&Registration{
		Pattern:      RegPatternStatic,
		Subscription: subscription,
		Timestamp:    time.Now().Unix(),
		Version:      RegDefaultVersion,
	})
}

// generateInstanceID returns "<hostname>:<uuid>" or, with realIP,
// "<hostname>@<realIP>:<uuid>", as kazoo-go does.
func generateInstanceID(realIP string) string {
	var u [16]byte
	_, _ = rand.Read(u[:])  // never fails (crypto/rand)
	u[6] = u[6]&0x0f | 0x40 // version 4
	u[8] = u[8]&0x3f | 0x80 // RFC 4122 variant
	uuid := fmt.Sprintf("%x-%x-%x-%x-%x", u[0:4], u[4:6], u[6:8], u[8:10], u[10:])
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "localhost"
	}
	if realIP != "" {
		return host + "@" + realIP + ":" + uuid
	}
	return host + ":" + uuid
}
