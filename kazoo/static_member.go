package kazoo

import (
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"slices"
	"time"

	"github.com/go-zookeeper/zk"
)

// ErrFencedInstanceID is wrapped by the error of a static instance's
// registration when its id is registered by another ZooKeeper session: a
// second live instance with the same id (Kafka's FENCED_INSTANCE_ID), or
// the session of one that crashed, until it expires.
var ErrFencedInstanceID = errors.New("kazoo: the static instance id is registered by another session")

// ErrNoReservation is returned, wrapped, when a static member's
// reservation node does not exist (any more).
var ErrNoReservation = errors.New("kazoo: no reservation for this static member")

// StaticMember is the reservation of a static member, kept in the
// persistent node /consumers/<group>/static/<id> while the member is
// registered and for its grace window after it left. docs/static-members.md
// has the layout and the protocol.
type StaticMember struct {
	// ID is the member's instance id (its Consumer.Group.InstanceId).
	ID string
	// Registration is the member's registration, as its ids node held it,
	// so that its share can be computed while it is away.
	Registration *Registration
	// GraceWindow is how long after it left its share stays reserved.
	GraceWindow time.Duration
	// Version is the node's version: a deletion is fenced by it, so a
	// member that came back (and wrote the node again) keeps its
	// reservation.
	Version int32
	// Mzxid is the zxid of the node's last write. Unlike Version, which
	// starts at 0 again when the node is deleted and created anew, it
	// names one write: one absence of the member.
	Mzxid int64
	// SessionTimeout is the session timeout ZooKeeper granted the member
	// when it last registered (0 when written by a version that did not
	// record it): a restart of the member waits up to twice this for a
	// crashed predecessor's registration to go, even when its own session
	// timeout is shorter.
	SessionTimeout time.Duration
}

// staticMemberNode is the JSON of a reservation node.
type staticMemberNode struct {
	Version       int             `json:"version"`
	GraceWindowMs int64           `json:"grace_window_ms"`
	Registration  json.RawMessage `json:"registration"`
	// SessionTimeoutMs is StaticMember.SessionTimeout.
	SessionTimeoutMs int64 `json:"session_timeout_ms,omitempty"`
}

// StaticInstance returns the handle of a static member: its id is id
// itself, and its registration (RegisterWithSubscription and the
// Register* methods built on it) also writes its reservation node with
// graceWindow, or deletes the node when graceWindow is 0, in the same
// transaction as the registration node. A registration
// node held by another session is refused with an error wrapping
// ErrFencedInstanceID rather than ErrInstanceAlreadyRegistered.
func (cg *Consumergroup) StaticInstance(id string, graceWindow time.Duration) *ConsumergroupInstance {
	return &ConsumergroupInstance{cg: cg, ID: id, static: true, graceWindow: graceWindow}
}

// registerStatic creates a static instance's registration node (an
// error wrapping ErrNodeExists when it exists) and, in the same Multi,
// writes its reservation node (any version: a write moves the version, so
// a deletion fenced by the old one fails), or deletes it when the grace
// window is 0. One transaction fences the reservation by the registration:
// an instance whose session ended, and whose id another instance
// registered meanwhile, finds the node taken and writes nothing over the
// new holder's reservation. A reservation created or deleted by someone
// else between the look and the Multi refuses the Multi: it looks again,
// a few times. With a window of 0, a reservation that cannot be deleted
// (a child node under it, an ACL) is left, as the group leaves one whose
// window ended: the member registers without deleting it.
func (cgi *ConsumergroupInstance) registerStatic(node string, registration []byte) error {
	kz := cgi.kz()
	reservation := kz.staticMemberPath(cgi.cg.Name, cgi.ID)
	var data []byte
	if cgi.graceWindow > 0 {
		var err error
		if data, err = cgi.reservationData(registration); err != nil {
			return err
		}
		if err := kz.mkdirRecursive(path.Dir(reservation)); err != nil {
			return err
		}
	}
	if err := kz.mkdirRecursive(path.Dir(node)); err != nil {
		return err
	}
	leave := false // a window of 0 met a reservation it cannot delete
	for range 3 {
		ok, _, err := kz.conn.Exists(reservation)
		if err != nil {
			return znodeErr("exists", reservation, err)
		}
		_ = cgi.cg.hook(stepReservationRead)
		ops := []any{&zk.CreateRequest{Path: node, Data: registration, Acl: kz.acl, Flags: zk.FlagEphemeral}}
		switch {
		case data != nil && ok:
			ops = append(ops, &zk.SetDataRequest{Path: reservation, Data: data, Version: -1})
		case data != nil:
			ops = append(ops, &zk.CreateRequest{Path: reservation, Data: data, Acl: kz.acl})
		case ok && !leave:
			ops = append(ops, &zk.DeleteRequest{Path: reservation, Version: -1})
		}
		resp, err := kz.conn.Multi(ops...)
		switch op := failedOp(resp); {
		case err == nil:
			return nil
		case op == 1 && (errors.Is(err, zk.ErrNoNode) || errors.Is(err, zk.ErrNodeExists)):
			continue // the reservation came or went meanwhile
		case op == 1 && data == nil && (errors.Is(err, zk.ErrNotEmpty) || errors.Is(err, zk.ErrNoAuth)):
			kz.logf("register %s with a grace window of 0: its reservation %s cannot be deleted (%v); left as it is", node, reservation, err)
			leave = true
			continue
		case op == 1:
			return znodeErr("write", reservation, err)
		}
		return znodeErr("create", node, err)
	}
	return znodeErr("write", reservation, fmt.Errorf("%w: the reservation kept changing", ErrClaimContended))
}

// reservationData is the JSON of the static instance's reservation node
// holding registration, its grace window and its session's timeout.
func (cgi *ConsumergroupInstance) reservationData(registration []byte) ([]byte, error) {
	return json.Marshal(staticMemberNode{
		Version:          1,
		GraceWindowMs:    cgi.graceWindow.Milliseconds(),
		Registration:     registration,
		SessionTimeoutMs: cgi.kz().SessionTimeout().Milliseconds(),
	})
}

// RegisteredBy returns the ZooKeeper session that holds the instance's
// registration node, and false when it is not registered.
func (cgi *ConsumergroupInstance) RegisteredBy() (int64, bool, error) {
	if err := cgi.check(); err != nil {
		return 0, false, err
	}
	node := cgi.regPath()
	ok, stat, err := cgi.kz().conn.Exists(node)
	if err != nil || !ok {
		return 0, false, znodeErr("exists", node, err)
	}
	return stat.EphemeralOwner, true, nil
}

// WatchRegistrationGone returns a channel that receives one Event when the
// instance's registration node is deleted or changes (or the watch is
// lost), and whether the node exists now.
func (cgi *ConsumergroupInstance) WatchRegistrationGone() (bool, <-chan Event, error) {
	if err := cgi.check(); err != nil {
		return false, nil, err
	}
	node := cgi.regPath()
	ok, _, w, err := cgi.kz().conn.ExistsW(node)
	if err != nil {
		return false, nil, znodeErr("exists", node, err)
	}
	return ok, w, nil
}

// StaticMembers returns the ids of the group's reservation nodes, sorted
// (present and absent members alike).
func (cg *Consumergroup) StaticMembers() ([]string, error) {
	if err := cg.check(); err != nil {
		return nil, err
	}
	ids, err := cg.kz.children(cg.kz.staticMembersPath(cg.Name))
	if errors.Is(err, ErrNoNode) {
		return nil, nil
	}
	slices.Sort(ids)
	return ids, err
}

// WatchStaticMembers is StaticMembers plus a watch on the list: the
// channel receives one Event when a reservation is created or deleted.
// While /consumers/<group>/static does not exist (a group without static
// members), it returns no ids and a watch on the node's creation, so
// groups without static members gain no node.
func (cg *Consumergroup) WatchStaticMembers() ([]string, <-chan Event, error) {
	if err := cg.check(); err != nil {
		return nil, nil, err
	}
	node := cg.kz.staticMembersPath(cg.Name)
	for range 3 {
		ids, _, w, err := cg.kz.conn.ChildrenW(node)
		if err == nil {
			slices.Sort(ids)
			return ids, w, nil
		}
		if !errors.Is(err, zk.ErrNoNode) {
			return nil, nil, znodeErr("children", node, err)
		}
		ok, _, w, err := cg.kz.conn.ExistsW(node)
		if err != nil {
			return nil, nil, znodeErr("exists", node, err)
		}
		if !ok {
			return nil, w, nil
		}
		// Created meanwhile: list it (its existence watch fires anyway).
	}
	return nil, nil, znodeErr("children", node, fmt.Errorf("%w: created and deleted repeatedly", ErrClaimContended))
}

// StaticMember reads the reservation of the static member id: an error
// wrapping ErrNoReservation when it is gone, ErrMalformed when it cannot
// be parsed.
func (cg *Consumergroup) StaticMember(id string) (*StaticMember, error) {
	if err := cg.check(); err != nil {
		return nil, err
	}
	if err := ValidateInstanceID(id); err != nil {
		return nil, err
	}
	node := cg.kz.staticMemberPath(cg.Name, id)
	data, stat, err := cg.kz.conn.Get(node)
	if errors.Is(err, zk.ErrNoNode) {
		return nil, znodeErr("get", node, ErrNoReservation)
	} else if err != nil {
		return nil, znodeErr("get", node, err)
	}
	var n staticMemberNode
	if err := json.Unmarshal(data, &n); err != nil {
		return nil, malformed(node, "reservation cannot be read: %v", err)
	}
	if n.GraceWindowMs < 0 || n.SessionTimeoutMs < 0 {
		return nil, malformed(node, "negative grace window %d ms or session timeout %d ms", n.GraceWindowMs, n.SessionTimeoutMs)
	}
	reg, err := parseRegistration(node, n.Registration)
	if err != nil {
		return nil, err
	}
	return &StaticMember{ID: id, Registration: reg, GraceWindow: time.Duration(n.GraceWindowMs) * time.Millisecond, Version: stat.Version, Mzxid: stat.Mzxid,
		SessionTimeout: time.Duration(n.SessionTimeoutMs) * time.Millisecond}, nil
}

// DeleteStaticMember deletes the reservation of the static member id if
// its node is still at version: a member that came back meanwhile wrote it
// again and keeps it. It returns an error wrapping ErrNoReservation when
// the node is gone or at another version, and when the member is
// registered: it is back, and wrote its reservation again with its
// registration, so there is no absence to end.
//
// Both conditions are checked in one transaction with the delete: the
// member's registration node is created and deleted again (it can be
// created only while the member is not registered; nobody ever sees it),
// then the reservation deleted at version. Checked apart, a member that
// came back in between, its reservation deleted meanwhile by another
// instance and written anew at the same version, lost it while registered.
func (cg *Consumergroup) DeleteStaticMember(id string, version int32) error {
	if err := cg.check(); err != nil {
		return err
	}
	if err := ValidateInstanceID(id); err != nil {
		return err
	}
	node := cg.kz.staticMemberPath(cg.Name, id)
	reg := cg.kz.instancePath(cg.Name, id)
	_ = cg.hook(stepReservationDelete)
	resp, err := cg.kz.conn.Multi(
		&zk.CreateRequest{Path: reg, Acl: cg.kz.acl, Flags: zk.FlagEphemeral},
		&zk.DeleteRequest{Path: reg, Version: 0},
		&zk.DeleteRequest{Path: node, Version: version},
	)
	switch op := failedOp(resp); {
	case err == nil:
		return nil
	case op == 0 && errors.Is(err, zk.ErrNodeExists):
		return fmt.Errorf("kazoo: delete the reservation of %s: it is registered: %w", id, ErrNoReservation)
	case op == 0 && errors.Is(err, zk.ErrNoNode):
		// No ids/ node: nobody has registered in the group since it was
		// made, so nobody can be registered now.
		err = cg.kz.conn.Delete(node, version)
	case op == 2:
		// err is the delete's own refusal.
	default:
		return znodeErr("delete", reg, err)
	}
	if errors.Is(err, zk.ErrNoNode) || errors.Is(err, zk.ErrBadVersion) {
		return znodeErr("delete", node, fmt.Errorf("%w (at version %d): %w", ErrNoReservation, version, err))
	}
	return znodeErr("delete", node, err)
}

// OwnRegistration is Registration for this client's own registration: a
// node held by another session (another instance registered a static id
// while ours was gone) reads as ErrInstanceNotRegistered (bare), so the
// caller registers again and learns that it is fenced.
func (cgi *ConsumergroupInstance) OwnRegistration() (*Registration, error) {
	reg, _, err := cgi.readOwnRegistration(false)
	return reg, err
}

// WatchOwnRegistration is WatchRegistration for this client's own
// registration, as OwnRegistration reads it: a node held by another
// session gives ErrInstanceNotRegistered together with the watch.
func (cgi *ConsumergroupInstance) WatchOwnRegistration() (*Registration, <-chan Event, error) {
	return cgi.readOwnRegistration(true)
}

func (cgi *ConsumergroupInstance) readOwnRegistration(watch bool) (*Registration, <-chan Event, error) {
	if err := cgi.check(); err != nil {
		return nil, nil, err
	}
	node := cgi.regPath()
	var (
		data []byte
		stat *zk.Stat
		w    <-chan zk.Event
		err  error
	)
	if watch {
		data, stat, w, err = cgi.kz().conn.GetW(node)
	} else {
		data, stat, err = cgi.kz().conn.Get(node)
	}
	if errors.Is(err, zk.ErrNoNode) {
		return nil, nil, ErrInstanceNotRegistered
	} else if err != nil {
		return nil, nil, znodeErr("get", node, err)
	}
	if err := cgi.ownRegistration(node, true, stat); err != nil {
		return nil, w, err
	}
	reg, err := parseRegistration(node, data)
	return reg, w, err
}
