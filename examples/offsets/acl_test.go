package main

import (
	"errors"
	"slices"
	"testing"

	"github.com/zkgroup/kafka/kazoo"
)

func TestParseACL(t *testing.T) {
	pw := func() (string, error) { return "secret", nil }
	got, err := parseACL("recommended", "app", pw)
	if err != nil || !slices.Equal(got, kazoo.GroupACL("app", "secret")) {
		t.Fatalf("recommended: %v, %v", got, err)
	}
	if _, err := parseACL("recommended", "", pw); err == nil {
		t.Fatal("recommended without -zk-user accepted")
	}
	got, err = parseACL("open", "", nil)
	if err != nil || !slices.Equal(got, kazoo.WorldACL(kazoo.PermAll)) {
		t.Fatalf("open: %v, %v", got, err)
	}
	got, err = parseACL("digest:app:kK9/x=:cdrwa,world:anyone:r", "", nil)
	want := []kazoo.ACL{{Scheme: "digest", ID: "app:kK9/x=", Perms: kazoo.PermAll}, {Scheme: "world", ID: "anyone", Perms: kazoo.PermRead}}
	if err != nil || !slices.Equal(got, want) {
		t.Fatalf("list: %v, %v", got, err)
	}
	if s := formatACL(want); s != "digest:app:kK9/x=:cdrwa,world:anyone:r" {
		t.Fatalf("formatACL: %s", s)
	}
	for _, bad := range []string{"world:anyone", "world:anyone:x", ":a:r", "world::", "world:anyone:"} {
		if _, err := parseACL(bad, "", nil); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
	fail := func() (string, error) { return "", errors.New("no file") }
	if _, err := parseACL("recommended", "app", fail); err == nil {
		t.Fatal("a missing password file was ignored")
	}
}
