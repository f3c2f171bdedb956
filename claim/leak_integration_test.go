package claim

import (
	"context"
	"errors"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/zkgroup/kafka/internal/tcpproxy"
	"github.com/zkgroup/kafka/internal/testenv"
	"github.com/zkgroup/kafka/kazoo"
)

// armCounter counts the watches its Registry arms.
type armCounter struct {
	Registry
	arms atomic.Int64
}

func (a *armCounter) WatchOwner(ctx context.Context, topic string, partition int32) (string, <-chan kazoo.Event, error) {
	owner, ch, err := a.Registry.WatchOwner(ctx, topic, partition)
	if ch != nil {
		a.arms.Add(1)
	}
	return owner, ch, err
}

// On the real stack: A holds a partition while B keeps claiming it for 100
// rounds of Keep, each ending on a small budget. B arms one watch on A's
// owner node in all, and its goroutines (package kazoo forwards each watch
// in one) stay flat.
func TestIntegrationKeepWatchesFlat(t *testing.T) {
	conf := quickRoundsConfig()
	_, a, _, cgA := itGroup(t, conf)
	cgB := itConnect(t).Consumergroup(cgA.Name)
	regB := &armCounter{Registry: NewKazooRegistry(cgB, "B")}
	b := newClaimer(t, regB, conf)
	const topic, partition, rounds = "claim.leak", int32(0), 100

	held, err := a.Claim(t.Context(), topic, partition)
	if err != nil {
		t.Fatalf("A claims: %v", err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	var samples []roundSample
	_, err = b.Keep(ctx, topic, partition, func(e *Error) {
		if !errors.Is(e, kazoo.ErrPartitionClaimedByOther) {
			t.Errorf("round %d: %v, want ErrPartitionClaimedByOther", len(samples)+1, e)
		}
		samples = append(samples, roundSample{goroutines: runtime.NumGoroutine()})
		if len(samples) == rounds {
			cancel()
		}
	})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Keep = %v, want context.Canceled", err)
	}
	checkFlat(t, samples)
	if n := regB.arms.Load(); n != 1 {
		t.Errorf("B armed %d watches on A's node over %d rounds, want 1", n, rounds)
	}
	t.Logf("%d rounds: %d watches armed; goroutines %d -> %d; B %+v", len(samples),
		regB.arms.Load(), samples[0].goroutines, samples[len(samples)-1].goroutines, b.Stats())
	if err := a.Release(context.Background(), held); err != nil {
		t.Errorf("A releases: %v", err)
	}
}

// Release promises to return within ReleaseTimeout, also while ZooKeeper
// is unreachable. There the client holds the release's requests: queued
// until its next pass over the servers when the link is cut (about a
// second), or sent and unanswered until the connection drops or times out
// when replies are lost (up to two thirds of the session timeout). The
// registry stops waiting at the deadline; once the link is back, the claim
// is still released normally (the abandoned call may have done it already).
func TestIntegrationReleaseWhileUnreachable(t *testing.T) {
	testenv.Integration(t)
	faults := []struct {
		name string
		// start breaks the link; the returned func waits until it is healed.
		start func(p *tcpproxy.Proxy) (heal func())
	}{
		{"cut", func(p *tcpproxy.Proxy) func() {
			p.Cut()
			return p.Restore
		}},
		{"replies lost", func(p *tcpproxy.Proxy) func() {
			done := make(chan struct{})
			go func() { defer close(done); p.LoseReplies(2 * time.Second) }()
			time.Sleep(100 * time.Millisecond) // let the mute begin
			return func() { <-done }
		}},
	}
	for _, f := range faults {
		t.Run(f.name, func(t *testing.T) { releaseWhileUnreachable(t, f.start) })
	}
}

func releaseWhileUnreachable(t *testing.T, breakLink func(*tcpproxy.Proxy) func()) {
	const slack = 300 * time.Millisecond
	conf := NewConfig()
	conf.ReleaseTimeout = 500 * time.Millisecond
	group := testenv.UniqueName("claim-it")
	admin := itConnect(t).Consumergroup(group)
	t.Cleanup(func() {
		if err := admin.Delete(); err != nil {
			t.Errorf("cleanup: delete group %s: %v", group, err)
		}
	})
	proxy, err := tcpproxy.New(testenv.ZKAddr())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = proxy.Close() })
	kz, err := kazoo.NewKazoo([]string{proxy.Addr()}, nil)
	if err != nil {
		t.Fatalf("connect through the proxy: %v", err)
	}
	t.Cleanup(func() { _ = kz.Close() })
	c := newClaimer(t, NewKazooRegistry(kz.Consumergroup(group), "A"), conf)
	const topic, partition = "claim.unreachable", int32(0)
	pc, err := c.Claim(t.Context(), topic, partition)
	if err != nil {
		t.Fatalf("claim: %v", err)
	}

	heal := breakLink(proxy)
	type result struct {
		err  error
		took time.Duration
	}
	done := make(chan result, 1)
	start := time.Now()
	go func() {
		err := c.Release(context.Background(), pc)
		done <- result{err, time.Since(start)}
	}()
	var r result
	select {
	case r = <-done:
	case <-time.After(conf.ReleaseTimeout + 5*time.Second):
		t.Errorf("Release still blocked 5s after its ReleaseTimeout (%v)", conf.ReleaseTimeout)
		heal()
		r = <-done
	}
	heal()
	if r.took > conf.ReleaseTimeout+slack {
		t.Errorf("Release returned after %v, want within ReleaseTimeout %v + %v", r.took, conf.ReleaseTimeout, slack)
	}
	if !errors.Is(r.err, context.DeadlineExceeded) {
		t.Errorf("Release = %v, want context.DeadlineExceeded", r.err)
	}
	t.Logf("Release with ZooKeeper unreachable: %v after %v", r.err, r.took)

	// Back in touch (the session survived): the claim is released, by the
	// abandoned call or by this one.
	conf.ReleaseTimeout = 10 * time.Second
	c2 := newClaimer(t, NewKazooRegistry(kz.Consumergroup(group), "A"), conf)
	if err := c2.Release(context.Background(), pc); err != nil && !errors.Is(err, kazoo.ErrPartitionNotClaimed) {
		t.Errorf("Release once the link is back: %v", err)
	}
	if owner, err := admin.PartitionOwner(topic, partition); err != nil || owner != nil {
		t.Errorf("owner %v (err %v) after the release, want none", owner, err)
	}
}

// quickRoundsConfig ends each claim round on the real stack within about
// 50 ms, so that many rounds of Keep fit in a test.
func quickRoundsConfig() *Config {
	conf := NewConfig()
	conf.ProcessingTimeout = 30 * time.Millisecond
	conf.ExtraTime = 20 * time.Millisecond
	conf.ExtraAttempts = 1
	conf.InitialInterval = 5 * time.Millisecond
	conf.MaxInterval = 10 * time.Millisecond
	conf.RetryCooldown = time.Millisecond
	return conf
}
