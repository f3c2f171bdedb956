package consumergroup

import (
	"testing"
	"time"

	"github.com/IBM/sarama"

	"github.com/zkgroup/kafka/internal/tcpproxy"
	"github.com/zkgroup/kafka/internal/testenv"
)

// The session fence guards Close's drain too. With kafka storage nothing
// fences a commit but what the instance knows of its session: cut off from
// ZooKeeper while Close waits for a mark, past the session's expiry (when
// another instance may own the partition and commit), the instance must
// not commit that mark to Kafka. Before, the fence stopped when Close
// began, the gate stayed open, and the mark reached Kafka after the expiry.
func TestIntegrationCloseDrainCutOffCommitsNothingToKafka(t *testing.T) {
	f := newOrphanFixture(t, 1)
	p, err := tcpproxy.New(testenv.ZKAddr())
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	cfg := slowDrainConfig() // the drain waits for marks up to a minute
	cfg.Offsets.Storage = OffsetStorageKafka
	cfg.Zookeeper.Timeout = 4 * time.Second
	cg, err := JoinConsumerGroup(f.group, []string{f.topic}, []string{p.Addr()}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	granted := cg.kazoo.SessionTimeout()
	var m [2]*sarama.ConsumerMessage
	for i := range m {
		select {
		case m[i] = <-cg.Messages():
		case <-time.After(20 * time.Second):
			t.Fatal("no message delivered")
		}
	}
	if err := cg.CommitUpto(m[0]); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(10 * time.Second); kafkaCommitted(t, f.group, f.topic, 0) != m[0].Offset+1; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the first mark was not committed")
		}
	}

	closed := make(chan error, 1)
	go func() { closed <- cg.Close() }()
	time.Sleep(300 * time.Millisecond) // Close has begun: the drain waits for m[1]'s mark
	p.Cut()
	cut := time.Now()
	time.Sleep(2*granted + time.Second)
	if o := f.owner(0); o != "" {
		t.Fatalf("owner node still there (%q) %v after the cut: the session did not expire", o, time.Since(cut))
	}
	if !cg.gate.Paused() {
		t.Errorf("%v after the cut (session timeout %v), the gate is still open", time.Since(cut).Round(time.Millisecond), granted)
	}
	_ = cg.CommitUpto(m[1]) // the drain's mark, after the session expired
	time.Sleep(2 * time.Second)
	if got := kafkaCommitted(t, f.group, f.topic, 0); got != m[0].Offset+1 {
		t.Errorf("Kafka holds %d, want %d: a mark was committed %v after the cut, past the session's expiry",
			got, m[0].Offset+1, time.Since(cut).Round(time.Millisecond))
	}
	p.Restore()
	select {
	case <-closed:
	case <-time.After(90 * time.Second):
		t.Fatal("Close did not return")
	}
}
