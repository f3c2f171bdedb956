package kazoo

import (
	"errors"
	"fmt"
	"path"
	"slices"

	"github.com/go-zookeeper/zk"
)

// GroupACL is the recommended access list of a protected consumer group's
// znodes (set it as Config.ACL of every member): the digest user with this
// password may do everything (register, claim, commit, release, reset,
// change the ACL), everyone else may only read, so monitoring tools see
// offsets and owners without credentials. To hide the group from readers
// too, use DigestACL(PermAll, user, password) alone.
func GroupACL(user, password string) []ACL {
	return append(DigestACL(PermAll, user, password), WorldACL(PermRead)...)
}

// ACLChange is one znode whose access list ApplyACL changed (or, in a dry
// run, would change). ZooKeeper shows a digest entry's hash only to
// sessions with the admin permission on the node; others see "x".
type ACLChange struct {
	Path   string // full path, chroot included
	Before []ACL
}

// ApplyACL sets acl on the group's node and on every node below it
// (registrations, owners, offsets, epochs), where the ACL differs, and
// returns those nodes. With dryRun it changes nothing and returns what it
// would change.
//
// ZooKeeper checks each node's own ACL and nodes inherit nothing: a group
// created without Config.ACL stays open to everyone until every node of it
// is changed, which is what this is for. Members must then run with
// Config.ACL = acl and the matching Config.Auth, so the nodes they create
// later get the same list. Changing a node's ACL needs the admin permission
// on it (PermAdmin under its current ACL). Nodes that vanish during the walk
// (a released claim) are skipped; a member creating a node meanwhile with
// another ACL is not seen, so apply it again after the members run with the
// new Config.ACL.
func (cg *Consumergroup) ApplyACL(acl []ACL, dryRun bool) ([]ACLChange, error) {
	if err := ValidateGroupName(cg.Name); err != nil {
		return nil, err
	}
	if len(acl) == 0 {
		return nil, errors.New("kazoo: ApplyACL needs a non-empty ACL (WorldACL(PermAll) opens the group to everyone)")
	}
	for i, a := range acl {
		if a.Scheme == "" || a.Perms == 0 {
			return nil, fmt.Errorf("kazoo: ApplyACL: ACL[%d] needs a scheme and permissions", i)
		}
	}
	root := cg.kz.groupPath(cg.Name)
	if ok, err := cg.kz.exists(root); err != nil {
		return nil, err
	} else if !ok {
		return nil, znodeErr("apply ACL", root, ErrNoNode)
	}
	var changes []ACLChange
	err := cg.kz.applyACL(root, toZKACL(acl), dryRun, &changes)
	return changes, err
}

// applyACL lists node's children before changing its ACL (the new one may
// not let this session read), then does the same below each child.
func (kz *Kazoo) applyACL(node string, want []zk.ACL, dryRun bool, changes *[]ACLChange) error {
	have, stat, err := kz.conn.GetACL(node)
	if errors.Is(err, ErrNoNode) {
		return nil
	} else if err != nil {
		return znodeErr("get ACL", node, err)
	}
	children, _, err := kz.conn.Children(node)
	if errors.Is(err, ErrNoNode) {
		return nil
	} else if err != nil {
		return znodeErr("children", node, err)
	}
	if !sameACL(have, want) {
		if !dryRun {
			_, err := kz.conn.SetACL(node, want, stat.Aversion)
			if errors.Is(err, ErrBadVersion) { // changed meanwhile: ours wins
				_, err = kz.conn.SetACL(node, want, -1)
			}
			if errors.Is(err, ErrNoNode) {
				return nil
			} else if err != nil {
				return znodeErr("set ACL", node, err)
			}
		}
		*changes = append(*changes, ACLChange{Path: node, Before: fromZKACL(have)})
	}
	slices.Sort(children)
	for _, c := range children {
		if err := kz.applyACL(path.Join(node, c), want, dryRun, changes); err != nil {
			return err
		}
	}
	return nil
}

// sameACL compares two access lists as sets of entries.
func sameACL(a, b []zk.ACL) bool {
	if len(a) != len(b) {
		return false
	}
	for _, x := range a {
		if !slices.Contains(b, x) {
			return false
		}
	}
	return true
}
