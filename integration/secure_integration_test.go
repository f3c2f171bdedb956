package integration

import (
	"crypto/tls"
	"errors"
	"io"
	"log"
	"net"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zkgroup/kafka/consumergroup"
	"github.com/zkgroup/kafka/internal/testenv"
	"github.com/zkgroup/kafka/kazoo"
)

// TestIntegrationSecureCleanRebalance: the whole group over TLS (to
// ZooKeeper and Kafka) and SCRAM, its nodes protected by digest
// credentials. 16 partitions, one member, then a second joins mid-stream:
// 0 duplicates, 0 lost, no offset going backwards; and every node the
// members created carries the recommended ACL (applying it again would
// change nothing).
func TestIntegrationSecureCleanRebalance(t *testing.T) {
	s := secureEnv(t)
	const partitions = 16
	topic := newTopic(t, partitions)
	group := testenv.UniqueName("g")
	user, pw := group, randomPassword()
	counts := produce(t, topic, partitions*200)
	total := 0
	for _, c := range counts {
		total += int(c)
	}
	l := newLedger()
	h := recordDeliveries(t, group, topic, partitions, l) // plain port, read-only: world may read

	var errs atomic.Int64
	onErr := func(err error) { errs.Add(1); t.Logf("error: %v", err) }
	a := joinVia(t, s.zkTLS, group, []string{topic}, s.groupConfig(t, user, pw))
	aDone := readGroup(a, 1, l, time.Millisecond, onErr)
	waitFor(t, 60*time.Second, "a backlog to be processed in part", func() bool { return l.distinct() >= 1000 })
	b := joinVia(t, s.zkTLS, group, []string{topic}, s.groupConfig(t, user, pw))
	bDone := readGroup(b, 2, l, 0, onErr)
	waitFor(t, 120*time.Second, "every message", func() bool { return l.missing(topic, counts) == 0 })

	// Every node below the group, registrations and claims included, has
	// the ACL the members were given.
	conf := kazoo.NewConfig()
	conf.TLS = s.zkClientTLS(t)
	conf.Auth = []kazoo.Auth{kazoo.DigestAuth(user, pw)}
	kz := connectSecureZK(t, s, conf)
	changes, err := kz.Consumergroup(group).ApplyACL(kazoo.GroupACL(user, pw), true)
	if err != nil {
		t.Fatalf("ApplyACL dry run: %v", err)
	}
	for _, c := range changes {
		t.Errorf("node %s has ACL %v, not the group's", c.Path, c.Before)
	}

	closeGroup(t, a)
	closeGroup(t, b)
	<-aDone
	<-bDone
	rep := h.assert(expectation{produced: counts})
	t.Logf("delivered %d distinct of %d, %d duplicates, %d errors; offset regressions %d",
		l.distinct(), total, l.duplicates(), errs.Load(), len(rep.violations[invBackwards]))
	if m := l.missing(topic, counts); m != 0 {
		t.Errorf("%d messages lost", m)
	}
	if d := l.duplicates(); d != 0 {
		t.Errorf("%d duplicate deliveries on a clean rebalance", d)
	}
}

// TestIntegrationSecureZombie is the zombie scenario (see
// TestIntegrationZombie) with every member over TLS + SCRAM and the group
// protected by digest credentials; the proxy that cuts A off forwards the
// TLS bytes as they are.
func TestIntegrationSecureZombie(t *testing.T) {
	s := secureEnv(t)
	user, pw := testenv.UniqueName("zombie"), randomPassword()
	runZombie(t, s.zkTLS, func() *consumergroup.Config { return s.groupConfig(t, user, pw) }, messagesMember)
}

// TestIntegrationSecureIntruder: a group of two members protected by its
// digest credentials consumes a stream while an intruder, with a valid TLS
// client certificate but other credentials, tries to register, join,
// claim, delete an owner node and a registration, write an offset, reset
// the offsets and take over the ACL. Each attempt fails with ErrNoAuth;
// the intruder can read the offsets (as monitoring does). The group is
// undisturbed: the same owners and instances before and after, no error,
// no message lost or delivered twice.
func TestIntegrationSecureIntruder(t *testing.T) {
	s := secureEnv(t)
	const partitions = 4
	topic := newTopic(t, partitions)
	group := testenv.UniqueName("g")
	user, pw := group, randomPassword()
	topics := []string{topic}

	prod := startProducer(t, topic, 4, 20*time.Millisecond, 100000)
	l := newLedger()
	h := recordDeliveries(t, group, topic, partitions, l) // plain port, read-only: world may read
	var errs atomic.Int64
	onErr := func(err error) { errs.Add(1); t.Logf("error: %v", err) }
	a := joinVia(t, s.zkTLS, group, topics, s.groupConfig(t, user, pw))
	aDone := readGroup(a, 1, l, 0, onErr)
	b := joinVia(t, s.zkTLS, group, topics, s.groupConfig(t, user, pw))
	bDone := readGroup(b, 2, l, 0, onErr)
	t.Cleanup(func() { closeGroup(t, a); closeGroup(t, b); <-aDone; <-bDone })
	state := newGroupState(t, group)
	waitFor(t, 30*time.Second, "both members to own two partitions each and commit", func() bool {
		owners := state.owners(topic, partitions)
		per := map[string]int{}
		for _, id := range owners {
			per[id]++
		}
		offs, err := state.offsets(topic, partitions)
		if err != nil || len(owners) != partitions || len(per) != 2 {
			return false
		}
		for _, n := range per {
			if n != partitions/2 { // still rebalancing: the first member holds more
				return false
			}
		}
		for _, o := range offs {
			if o < 0 {
				return false
			}
		}
		return true
	})
	ownersBefore, instancesBefore := state.owners(topic, partitions), state.instances()

	// The intruder: a valid certificate (TLS is transport, not
	// authorization) and credentials of its own.
	conf := kazoo.NewConfig()
	conf.TLS = s.zkClientTLS(t)
	conf.Auth = []kazoo.Auth{kazoo.DigestAuth("mallory", "guess")}
	kz := connectSecureZK(t, s, conf)
	icg := kz.Consumergroup(group)

	offs, err := icg.FetchAllOffsets()
	if err != nil || len(offs[topic]) != partitions {
		t.Errorf("the intruder cannot read the offsets (%v, %v); monitoring should", offs, err)
	}
	attempts := map[string]error{}
	inst := icg.NewInstance()
	attempts["register"] = inst.Register(topics)
	_, attempts["claim an owned partition"] = inst.Claim(topic, 0)
	attempts["claim as an owner's instance id"] = icg.Instance(ownersBefore[1]).ClaimPartition(topic, 1)
	attempts["write an offset"] = icg.CommitOffset(topic, 0, 1)
	attempts["reset the offsets"] = icg.ResetOffsets()
	_, attempts["take over the ACL"] = icg.ApplyACL(kazoo.WorldACL(kazoo.PermAll), false)
	cfg := s.groupConfig(t, "mallory", "guess")
	cfg.Zookeeper.ConnectTimeout = 5 * time.Second
	if cg, err := consumergroup.JoinConsumerGroup(group, topics, []string{s.zkTLS}, cfg); err == nil {
		closeGroup(t, cg)
		attempts["join the group"] = errors.New("joined")
	} else {
		attempts["join the group"] = err
	}
	// Below the library: the raw client, deleting what the library never
	// deletes for others.
	raw := rawZK(t, s.zkTLS, conf.TLS, "mallory", "guess")
	attempts["delete an owner node"] = raw.Delete("/consumers/"+group+"/owners/"+topic+"/2", -1)
	attempts["delete a registration"] = raw.Delete("/consumers/"+group+"/ids/"+instancesBefore[0], -1)
	_, attempts["overwrite an offset node"] = raw.Set("/consumers/"+group+"/offsets/"+topic+"/3", []byte("0"), -1)
	_, attempts["move an epoch"] = raw.Set("/consumers/"+group+"/epochs/"+topic+"/3", nil, -1)
	for what, err := range attempts {
		if !errors.Is(err, kazoo.ErrNoAuth) {
			t.Errorf("intruder: %s: got %v, want ErrNoAuth", what, err)
		} else {
			t.Logf("intruder: %s: %v", what, err)
		}
	}

	// The group carries on as if nothing happened.
	time.Sleep(time.Second)
	counts, err := prod.stop()
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, 30*time.Second, "every produced message", func() bool { return l.missing(topic, counts) == 0 })
	if o := state.owners(topic, partitions); !mapsEqual(o, ownersBefore) {
		t.Errorf("owners changed: %v, before %v", o, ownersBefore)
	}
	if i := state.instances(); !slices.Equal(i, instancesBefore) {
		t.Errorf("instances changed: %v, before %v", i, instancesBefore)
	}
	if d := l.duplicates(); d != 0 {
		t.Errorf("%d duplicate deliveries", d)
	}
	if rep := h.assert(expectation{produced: counts}); rep.dups != 0 {
		t.Errorf("history: %d duplicates (%v)", rep.dups, rep.dupsBy)
	}
	if n := errs.Load(); n != 0 {
		t.Errorf("the members saw %d errors", n)
	}
	t.Logf("group undisturbed: %d messages, 0 lost, %d duplicates, owners %v", l.distinct(), l.duplicates(), ownersBefore)
}

func mapsEqual(a, b map[int32]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// rawZK is a go-zookeeper client connected to addr over TLS, with digest
// credentials.
func rawZK(t *testing.T, addr string, tlsConf *tls.Config, user, password string) *zk.Conn {
	t.Helper()
	dial := func(network, address string, timeout time.Duration) (net.Conn, error) {
		c := tlsConf.Clone()
		c.ServerName, _, _ = net.SplitHostPort(address)
		return tls.DialWithDialer(&net.Dialer{Timeout: 5 * time.Second}, network, address, c)
	}
	conn, events, err := zk.Connect([]string{addr}, 6*time.Second, zk.WithDialer(dial), zk.WithLogInfo(false),
		zk.WithLogger(log.New(io.Discard, "", 0)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(conn.Close)
	deadline := time.After(10 * time.Second)
	for ev := range events {
		if ev.State == zk.StateHasSession {
			break
		}
		select {
		case <-deadline:
			t.Fatalf("raw client: no session with %s", addr)
		default:
		}
	}
	if err := conn.AddAuth("digest", []byte(user+":"+password)); err != nil {
		t.Fatal(err)
	}
	return conn
}

// TestIntegrationSecureBadTLS: each wrong TLS setting ends NewKazoo with an
// error naming the server and the problem after Config.ConnectTimeout
// (plus up to a second for the ZooKeeper client to stop), and leaves
// nothing running.
func TestIntegrationSecureBadTLS(t *testing.T) {
	s := secureEnv(t)
	const connectTimeout = 3 * time.Second
	cases := []struct {
		name   string
		server string
		ca     string
		cert   string
		want   string
	}{
		{"client certificate from an unknown CA", s.zkTLS, "ca.pem", "rogue-client", "certificate"},
		{"no client certificate", s.zkTLS, "ca.pem", "", "bad certificate"},
		{"server certificate from an unknown CA", s.zkTLS, "rogue-ca.pem", "client", "certificate signed by unknown authority"},
		{"plaintext port", testenv.ZKAddr(), "ca.pem", "client", "not a TLS port"},
	}
	for _, c := range cases {
		t.Run(strings.ReplaceAll(c.name, " ", "_"), func(t *testing.T) {
			conf := kazoo.NewConfig()
			conf.ConnectTimeout = connectTimeout
			cert, key := "", ""
			if c.cert != "" {
				cert, key = c.cert+"-cert.pem", c.cert+"-key.pem"
			}
			conf.TLS = s.tls(t, c.ca, cert, key)
			start := time.Now()
			kz, err := kazoo.NewKazoo([]string{c.server}, conf)
			took := time.Since(start)
			if err == nil {
				_ = kz.Close()
				t.Fatal("connected")
			}
			t.Logf("after %v: %v", took.Round(time.Millisecond), err)
			// Plus up to a second go-zookeeper's Close may wait for a
			// server it never reached.
			if took > connectTimeout+1500*time.Millisecond {
				t.Errorf("took %v, ConnectTimeout is %v", took, connectTimeout)
			}
			if !strings.Contains(err.Error(), c.server) || !strings.Contains(err.Error(), c.want) {
				t.Errorf("error does not name the server %s and %q", c.server, c.want)
			}
			var de *kazoo.DialError
			if !errors.As(err, &de) || de.Server != c.server {
				t.Errorf("error does not wrap a *kazoo.DialError for %s", c.server)
			}
		})
	}
}
