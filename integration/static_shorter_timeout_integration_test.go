package integration

import (
	"errors"
	"testing"
	"time"

	"github.com/zkgroup/kafka/consumergroup"
	"github.com/zkgroup/kafka/internal/tcpproxy"
	"github.com/zkgroup/kafka/internal/testenv"
	"github.com/zkgroup/kafka/kazoo"
)

// A release that shortens Zookeeper.Timeout, restarted at once after the
// release before it crashed under the same InstanceId: its join waits for
// the crashed session, granted the longer timeout, to expire, and then
// registers. It waited twice its own timeout, was refused with
// ErrFencedInstanceID although no live instance held the id, and so would
// crash-loop until the old session expired. The predecessor's session
// timeout is read from its reservation.
func TestIntegrationStaticRestartAfterCrashWithAShorterTimeout(t *testing.T) {
	testenv.Integration(t)
	t.Parallel()
	topic := newTopic(t, 1)
	group := testenv.UniqueName("static-lower-timeout")
	proxy, err := tcpproxy.New(testenv.ZKServers()[0])
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = proxy.Close() }()
	conf := kazoo.NewConfig()
	conf.Timeout = 10 * time.Second // the old release's setting
	crashed, err := kazoo.NewKazoo([]string{proxy.Addr()}, conf)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = crashed.Close() }()
	kg := crashed.Consumergroup(group)
	if err := kg.Create(); err != nil {
		t.Fatal(err)
	}
	if err := kg.StaticInstance("s0", 10*time.Second).Register([]string{topic}); err != nil {
		t.Fatal(err)
	}
	t.Logf("crashed predecessor's granted session timeout: %s", crashed.SessionTimeout())
	proxy.Cut() // the crash
	crashedAt := time.Now()

	cfg := staticConfig("s0", 10*time.Second)
	cfg.Zookeeper.Timeout = 2 * time.Second // the new release's setting
	cg, err := consumergroup.JoinConsumerGroup(group, []string{topic}, []string{testenv.ZKAddr()}, cfg)
	if err != nil {
		t.Fatalf("restart %s after the crash, no live instance holding s0: %v (fenced: %v)",
			time.Since(crashedAt).Round(time.Millisecond), err, errors.Is(err, consumergroup.ErrFencedInstanceID))
	}
	if d := time.Since(crashedAt); d < 4*time.Second {
		t.Fatalf("registered %v after the crash, before the crashed session (timeout %v) could expire", d, crashed.SessionTimeout())
	}
	closeGroup(t, cg)
}
