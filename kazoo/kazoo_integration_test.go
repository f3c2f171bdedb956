package kazoo

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/zkgroup/kafka/internal/testenv"
)

func TestIntegrationNewKazooErrors(t *testing.T) {
	testenv.Integration(t)

	conf := NewConfig()
	conf.ConnectTimeout = 500 * time.Millisecond
	if _, err := NewKazoo([]string{"127.0.0.1:1"}, conf); err == nil || !strings.Contains(err.Error(), "ConnectTimeout") {
		t.Errorf("unreachable server: %v; want an error naming Config.ConnectTimeout", err)
	}
	if _, err := NewKazoo(nil, nil); err == nil {
		t.Error("no servers: want an error")
	}
	bad := NewConfig()
	bad.Timeout = 0
	if _, err := NewKazoo([]string{testenv.ZKAddr()}, bad); err == nil || !strings.Contains(err.Error(), "Config.Timeout") {
		t.Errorf("invalid config: %v", err)
	}

	chroot := "/" + testenv.UniqueName("missing-chroot")
	_, err := NewKazooFromConnectionString(testenv.ZKAddr()+chroot, nil)
	var ze *ZnodeError
	if !errors.Is(err, ErrChrootNotFound) || !errors.As(err, &ze) || ze.Path != chroot {
		t.Errorf("missing chroot: %v; want ErrChrootNotFound naming %s", err, chroot)
	}
}

func TestIntegrationBrokersFromKafka(t *testing.T) {
	testenv.Integration(t)
	kz, err := NewKazooFromConnectionString(testenv.ZKAddr(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer kz.Close()

	brokers, err := kz.Brokers()
	if err != nil || len(brokers) == 0 {
		t.Fatalf("Brokers() = %v, %v", brokers, err)
	}
	list, err := kz.BrokerList()
	if err != nil || !slices.Equal(list, testenv.KafkaAddrs()) {
		t.Errorf("BrokerList() = %v, %v; want %v", list, err, testenv.KafkaAddrs())
	}
	specific, err := kz.SpecificBrokerList("plaintext")
	if err != nil || !slices.Equal(specific, list) {
		t.Errorf("SpecificBrokerList(plaintext) = %v, %v", specific, err)
	}
	ids, err := kz.SpecificbrokerIDList("PLAINTEXT")
	if err != nil || len(ids) != len(list) || !slices.IsSorted(ids) {
		t.Errorf("SpecificbrokerIDList = %v, %v", ids, err)
	}
	controller, err := kz.Controller()
	if err != nil || brokers[controller] == "" {
		t.Errorf("Controller() = %d, %v; not a live broker of %v", controller, err, brokers)
	}
	if kz.Chroot() != "" {
		t.Errorf("Chroot() = %q", kz.Chroot())
	}
	if kz.SessionID() == 0 {
		t.Error("SessionID() = 0 on a connected client")
	}
	if s, _ := kz.Session(); s.Status != SessionConnected || s.Generation != 1 {
		t.Errorf("Session() = %+v", s)
	}
}

// TestIntegrationDigestACL: with Config.Auth and Config.ACL, the nodes the
// library creates carry the ACL; a client without the credential cannot
// read them, one with it can.
func TestIntegrationDigestACL(t *testing.T) {
	testenv.Integration(t)
	root, err := NewKazooFromConnectionString(testenv.ZKAddr(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	chroot := "/" + testenv.UniqueName("acl")
	if err := root.mkdirRecursive(chroot); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = root.deleteRecursive(chroot) }()

	conf := NewConfig()
	conf.Chroot = chroot
	conf.Auth = []Auth{DigestAuth("alice", "secret")}
	conf.ACL = DigestACL(PermAll, "alice", "secret")
	alice, err := NewKazoo([]string{testenv.ZKAddr()}, conf)
	if err != nil {
		t.Fatal(err)
	}
	defer alice.Close()
	group := alice.Consumergroup("g")
	if err := group.CommitOffset("t", 0, 42); err != nil {
		t.Fatalf("commit with ACL: %v", err)
	}

	anon := NewConfig()
	anon.Chroot = chroot
	stranger, err := NewKazoo([]string{testenv.ZKAddr()}, anon)
	if err != nil {
		t.Fatal(err)
	}
	defer stranger.Close()
	if _, err := stranger.Consumergroup("g").FetchOffset("t", 0); !errors.Is(err, ErrNoAuth) {
		t.Errorf("read without credentials: %v; want ErrNoAuth", err)
	}

	conf2 := *conf
	conf2.ACL = nil
	friend, err := NewKazoo([]string{testenv.ZKAddr()}, &conf2)
	if err != nil {
		t.Fatal(err)
	}
	defer friend.Close()
	if off, err := friend.Consumergroup("g").FetchOffset("t", 0); err != nil || off != 42 {
		t.Errorf("read with credentials: %d, %v", off, err)
	}
	// Clean-up needs the credential too.
	if err := alice.deleteRecursive(chroot + "/consumers"); err != nil {
		t.Errorf("delete as alice: %v", err)
	}
}
