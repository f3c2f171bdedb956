package kazoo

import (
	"github.com/go-zookeeper/zk"
)

// Permission bits of an ACL entry, as ZooKeeper defines them.
const (
	PermRead   = zk.PermRead
	PermWrite  = zk.PermWrite
	PermCreate = zk.PermCreate
	PermDelete = zk.PermDelete
	PermAdmin  = zk.PermAdmin
	PermAll    = zk.PermAll
)

// ACL is one access-control entry of a znode.
type ACL struct {
	Perms  int32
	Scheme string // "world", "digest", "ip", "auth", ...
	ID     string // "anyone", "user:base64(sha1(user:password))", ...
}

// Auth is a credential added to the session, like ZooKeeper's addauth.
type Auth struct {
	Scheme      string
	Credentials []byte
}

// DigestAuth returns the credential for ZooKeeper's digest scheme.
func DigestAuth(user, password string) Auth {
	return Auth{Scheme: "digest", Credentials: []byte(user + ":" + password)}
}

// WorldACL grants perms to everyone.
func WorldACL(perms int32) []ACL {
	return []ACL{{Perms: perms, Scheme: "world", ID: "anyone"}}
}

// DigestACL grants perms to the digest user with this password.
func DigestACL(perms int32, user, password string) []ACL {
	a := zk.DigestACL(perms, user, password)
	return fromZKACL(a)
}

func fromZKACL(in []zk.ACL) []ACL {
	out := make([]ACL, len(in))
	for i, a := range in {
		out[i] = ACL{Perms: a.Perms, Scheme: a.Scheme, ID: a.ID}
	}
	return out
}

func toZKACL(in []ACL) []zk.ACL {
	if len(in) == 0 {
		return zk.WorldACL(zk.PermAll)
	}
	out := make([]zk.ACL, len(in))
	for i, a := range in {
		out[i] = zk.ACL{Perms: a.Perms, Scheme: a.Scheme, ID: a.ID}
	}
	return out
}
