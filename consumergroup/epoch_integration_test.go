package consumergroup

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/IBM/sarama"
	"github.com/go-zookeeper/zk"

	"github.com/zkgroup/kafka/internal/testenv"
)

// epochNode returns the version of the partition's epoch node.
func (f *orphanFixture) epochNode(conn *zk.Conn, p int32) int64 {
	f.t.Helper()
	_, stat, err := conn.Get(fmt.Sprintf("/consumers/%s/epochs/%s/%d", f.group, f.topic, p))
	if err != nil {
		f.t.Fatal(err)
	}
	return int64(stat.Version)
}

// zkConn is a plain ZooKeeper client of the test, closed at its end.
func zkConn(t *testing.T) *zk.Conn {
	t.Helper()
	conn, _, err := zk.Connect(testenv.ZKServers(), 6*time.Second, zk.WithLogInfo(false))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(conn.Close)
	return conn
}

// receive reads n messages from cg, failing the test after 30 s.
func receive(t *testing.T, cg *ConsumerGroup, n int) []*sarama.ConsumerMessage {
	t.Helper()
	var got []*sarama.ConsumerMessage
	deadline := time.After(30 * time.Second)
	for len(got) < n {
		select {
		case m := <-cg.Messages():
			got = append(got, m)
		case err := <-cg.Errors():
			t.Logf("error: %v", err)
		case <-deadline:
			t.Fatalf("received %d of %d messages", len(got), n)
		}
	}
	return got
}

// Epoch and MessageEpoch are the epoch node's version under the claim that
// delivered the messages. When the epoch moves (here by hand, as a reset
// or another claim moves it) the claim ends, the member claims again with
// a higher epoch and delivers the unmarked messages again: those carry the
// new epoch, the first deliveries none (never the new one).
func TestIntegrationMessageEpochIsTheEpochNodesVersion(t *testing.T) {
	f := newOrphanFixture(t, 1)
	conn := zkConn(t)
	cg, err := JoinConsumerGroup(f.group, []string{f.topic}, []string{testenv.ZKAddr()}, fenceTestConfig())
	if err != nil {
		t.Fatal(err)
	}
	defer cg.Close()

	first := receive(t, cg, 3) // not marked: delivered again after the loss
	e1 := f.epochNode(conn, 0)
	if e, ok := cg.Epoch(f.topic, 0); e != e1 || !ok {
		t.Errorf("Epoch = %d, %v; epoch node at %d", e, ok, e1)
	}
	for _, m := range first {
		if e, ok := cg.MessageEpoch(m); e != e1 || !ok {
			t.Errorf("offset %d: MessageEpoch = %d, %v; epoch node at %d", m.Offset, e, ok, e1)
		}
	}

	if _, err := conn.Set(fmt.Sprintf("/consumers/%s/epochs/%s/0", f.group, f.topic), nil, -1); err != nil {
		t.Fatal(err)
	}
	again := receive(t, cg, 3)
	e2 := f.epochNode(conn, 0)
	if e2 <= e1+1 {
		t.Fatalf("epoch node at %d after the bump from %d: not claimed again", e2, e1)
	}
	if e, ok := cg.Epoch(f.topic, 0); e != e2 || !ok {
		t.Errorf("after the new claim: Epoch = %d, %v; epoch node at %d", e, ok, e2)
	}
	for i, m := range again {
		if m.Offset != first[i].Offset {
			t.Fatalf("delivered again: offset %d, want %d", m.Offset, first[i].Offset)
		}
		if e, ok := cg.MessageEpoch(m); e != e2 || !ok {
			t.Errorf("offset %d delivered again: MessageEpoch = %d, %v; epoch node at %d", m.Offset, e, ok, e2)
		}
		if e, ok := cg.MessageEpoch(first[i]); ok {
			t.Errorf("offset %d of the first claim: MessageEpoch = %d, true; want false (its claim ended)", m.Offset, e)
		}
	}
}

// epochRecorder records the epoch of each claim its ConsumeClaim reads.
type epochRecorder struct{ epochs chan int64 }

func (h epochRecorder) Setup(sarama.ConsumerGroupSession) error   { return nil }
func (h epochRecorder) Cleanup(sarama.ConsumerGroupSession) error { return nil }
func (h epochRecorder) ConsumeClaim(s sarama.ConsumerGroupSession, c sarama.ConsumerGroupClaim) error {
	e, ok := ClaimEpoch(c)
	if !ok {
		e = -1
	}
	h.epochs <- e
	for m := range c.Messages() {
		s.MarkMessage(m, "")
	}
	return nil
}

// A HandlerGroup's ClaimEpoch is the epoch node's version under the claim.
func TestIntegrationClaimEpochIsTheEpochNodesVersion(t *testing.T) {
	f := newOrphanFixture(t, 1)
	conn := zkConn(t)
	g, err := NewConsumerGroup(f.group, []string{testenv.ZKAddr()}, fenceTestConfig())
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	h := epochRecorder{epochs: make(chan int64, 4)}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- g.Consume(ctx, []string{f.topic}, h) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("consume: %v", err)
		}
	}()
	select {
	case e := <-h.epochs:
		if want := f.epochNode(conn, 0); e != want {
			t.Errorf("ClaimEpoch = %d; epoch node at %d", e, want)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("no claim started")
	}
}
