package kazoo

import (
	"errors"
	"testing"

	"github.com/zkgroup/kafka/internal/testenv"
)

// TestIntegrationApplyACL: a group created open (no Config.ACL), with a
// registration, a claim and an offset, is protected by ApplyACL: the dry
// run lists every node and changes nothing; the real run changes them all;
// then a client without the credentials reads the offset but cannot write
// it, register, or change the ACL back, while the group's credentials can.
func TestIntegrationApplyACL(t *testing.T) {
	e := newCGEnv(t)
	owner := e.client()
	cg := owner.Consumergroup("secured")
	inst := cg.NewInstance()
	if err := inst.Register([]string{"t"}); err != nil {
		t.Fatal(err)
	}
	if _, err := inst.Claim("t", 0); err != nil {
		t.Fatal(err)
	}
	if err := cg.CommitOffset("t", 0, 42); err != nil {
		t.Fatal(err)
	}

	// The operator's session, with the group's credentials.
	conf := NewConfig()
	conf.Chroot = e.chroot
	conf.Auth = []Auth{DigestAuth("app", "pw")}
	op, err := NewKazoo([]string{testenv.ZKAddr()}, conf)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = op.Close() })
	acl := GroupACL("app", "pw")
	t.Cleanup(func() { // open it again, so the env can delete it
		if _, err := op.Consumergroup("secured").ApplyACL(WorldACL(PermAll), false); err != nil {
			t.Errorf("reopen: %v", err)
		}
	})

	dry, err := op.Consumergroup("secured").ApplyACL(acl, true)
	if err != nil {
		t.Fatal(err)
	}
	// The group, ids, ids/<instance>, owners, owners/t, owners/t/0,
	// offsets, offsets/t, offsets/t/0, epochs, epochs/t, epochs/t/0.
	if len(dry) != 12 {
		t.Errorf("dry run lists %d nodes, want 12: %v", len(dry), dry)
	}
	if again, _ := op.Consumergroup("secured").ApplyACL(acl, true); len(again) != len(dry) {
		t.Errorf("the dry run changed something: %d nodes left to change, was %d", len(again), len(dry))
	}
	done, err := op.Consumergroup("secured").ApplyACL(acl, false)
	if err != nil || len(done) != len(dry) {
		t.Fatalf("apply: %d nodes, %v", len(done), err)
	}
	if left, err := op.Consumergroup("secured").ApplyACL(acl, true); err != nil || len(left) != 0 {
		t.Fatalf("after applying, %d nodes still differ (%v)", len(left), err)
	}

	other := e.client() // no credentials
	ocg := other.Consumergroup("secured")
	if off, err := ocg.FetchOffset("t", 0); err != nil || off != 42 {
		t.Errorf("reading the offset without credentials: %d, %v", off, err)
	}
	if err := ocg.CommitOffset("t", 0, 1); !errors.Is(err, ErrNoAuth) {
		t.Errorf("writing the offset without credentials: %v, want ErrNoAuth", err)
	}
	if err := ocg.NewInstance().Register([]string{"t"}); !errors.Is(err, ErrNoAuth) {
		t.Errorf("registering without credentials: %v, want ErrNoAuth", err)
	}
	if _, err := ocg.ApplyACL(WorldACL(PermAll), false); !errors.Is(err, ErrNoAuth) {
		t.Errorf("changing the ACL without credentials: %v, want ErrNoAuth", err)
	}
	if err := op.Consumergroup("secured").CommitOffset("t", 0, 43); err != nil {
		t.Errorf("writing with the group's credentials: %v", err)
	}
	if _, err := cg.ApplyACL(nil, true); err == nil {
		t.Error("an empty ACL was accepted")
	}
}
