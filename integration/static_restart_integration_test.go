package integration

import (
	"testing"
	"time"

	"github.com/zkgroup/kafka/consumergroup"
	"github.com/zkgroup/kafka/internal/tcpproxy"
	"github.com/zkgroup/kafka/internal/testenv"
	"github.com/zkgroup/kafka/kazoo"
)

// A static member restarted at once after a crash joins: its crashed
// predecessor's session expires up to a server tick after its timeout,
// counted from its last request, so a join that gives up one session
// timeout after its own first attempt can be refused by a session that is
// about to expire. Three crashes, each restarted at once, so the tick
// falls differently each time.
func TestIntegrationStaticRestartRightAfterCrash(t *testing.T) {
	testenv.Integration(t)
	const session = 2 * time.Second
	topic := newTopic(t, 1)
	for i := range 3 {
		group := testenv.UniqueName("static-quick")
		proxy, err := tcpproxy.New(testenv.ZKServers()[0])
		if err != nil {
			t.Fatal(err)
		}
		conf := kazoo.NewConfig()
		conf.Timeout = session
		crashed, err := kazoo.NewKazoo([]string{proxy.Addr()}, conf)
		if err != nil {
			t.Fatal(err)
		}
		kg := crashed.Consumergroup(group)
		if err := kg.Create(); err != nil {
			t.Fatal(err)
		}
		member := kg.StaticInstance("s0", 10*time.Second)
		if err := member.Register([]string{topic}); err != nil {
			t.Fatal(err)
		}
		if _, err := member.Registered(); err != nil { // its last request
			t.Fatal(err)
		}
		proxy.Cut() // the crash: nothing more reaches ZooKeeper

		cfg := staticConfig("s0", 10*time.Second)
		cfg.Zookeeper.Timeout = session
		started := time.Now()
		cg, err := consumergroup.JoinConsumerGroup(group, []string{topic}, []string{testenv.ZKAddr()}, cfg)
		if err != nil {
			t.Fatalf("restart %d, %s after the crash: %v", i, time.Since(started).Round(time.Millisecond), err)
		}
		t.Logf("restart %d joined after %s", i, time.Since(started).Round(time.Millisecond))
		closeGroup(t, cg)
		proxy.Restore()
		_ = crashed.Close()
		_ = proxy.Close()
	}
}
