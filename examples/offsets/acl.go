package main

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/zkgroup/kafka/kazoo"
)

// parseACL reads the -apply-acl value:
//
//	recommended   the digest user of -zk-user / -zk-password-file may do
//	              everything, everyone else may read (kazoo.GroupACL)
//	open          everyone may do everything (ZooKeeper's and kazoo-go's default)
//	LIST          entries scheme:id:perms separated by commas, as
//	              ZooKeeper's setAcl takes them, e.g.
//	              "digest:app:kK9...=:cdrwa,world:anyone:r"
//
// password is the -zk-password-file content, needed by "recommended" only.
func parseACL(spec, user string, password func() (string, error)) ([]kazoo.ACL, error) {
	switch spec {
	case "recommended":
		if user == "" {
			return nil, errors.New("-apply-acl recommended needs -zk-user and -zk-password-file: the group's own credentials")
		}
		pw, err := password()
		if err != nil {
			return nil, err
		}
		return kazoo.GroupACL(user, pw), nil
	case "open":
		return kazoo.WorldACL(kazoo.PermAll), nil
	}
	var acl []kazoo.ACL
	for _, e := range strings.Split(spec, ",") {
		i, j := strings.Index(e, ":"), strings.LastIndex(e, ":")
		if i <= 0 || j <= i+1 || j == len(e)-1 {
			return nil, fmt.Errorf("ACL entry %q: want scheme:id:perms", e)
		}
		perms, err := parsePerms(e[j+1:])
		if err != nil {
			return nil, fmt.Errorf("ACL entry %q: %w", e, err)
		}
		acl = append(acl, kazoo.ACL{Scheme: e[:i], ID: e[i+1 : j], Perms: perms})
	}
	return acl, nil
}

var permLetters = []struct {
	letter byte
	perm   int32
}{{'r', kazoo.PermRead}, {'w', kazoo.PermWrite}, {'c', kazoo.PermCreate}, {'d', kazoo.PermDelete}, {'a', kazoo.PermAdmin}}

// parsePerms reads ZooKeeper's permission letters (any of "cdrwa").
func parsePerms(s string) (int32, error) {
	var p int32
	for i := 0; i < len(s); i++ {
		found := false
		for _, l := range permLetters {
			if s[i] == l.letter {
				p |= l.perm
				found = true
			}
		}
		if !found {
			return 0, fmt.Errorf("permission letter %q: want any of cdrwa", s[i])
		}
	}
	return p, nil
}

func formatACL(acl []kazoo.ACL) string {
	parts := make([]string, len(acl))
	for i, a := range acl {
		var letters []byte
		for _, l := range []byte("cdrwa") {
			for _, pl := range permLetters {
				if pl.letter == l && a.Perms&pl.perm != 0 {
					letters = append(letters, l)
				}
			}
		}
		parts[i] = a.Scheme + ":" + a.ID + ":" + string(letters)
	}
	return strings.Join(parts, ",")
}

// applyACL sets acl on every node of the group (or, with dryRun, lists the
// nodes it would change) and prints one line per node.
func applyACL(kz *kazoo.Kazoo, group string, acl []kazoo.ACL, dryRun bool, out io.Writer) error {
	changes, err := kz.Consumergroup(group).ApplyACL(acl, dryRun)
	verb := "set"
	if dryRun {
		verb = "would set"
	}
	for _, c := range changes {
		fmt.Fprintf(out, "%s %s: %s -> %s\n", verb, c.Path, formatACL(c.Before), formatACL(acl))
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "%d node(s) of group %s %s to %s", len(changes), group, verb, formatACL(acl))
	if dryRun {
		fmt.Fprint(out, " (dry run: nothing changed; -dry-run=false applies it)")
	}
	fmt.Fprintln(out)
	return nil
}
