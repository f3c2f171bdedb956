package main

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/IBM/sarama"

	"github.com/zkgroup/kafka/consumergroup"
	"github.com/zkgroup/kafka/internal/tcpproxy"
	"github.com/zkgroup/kafka/internal/testenv"
)

// The zombie scenario's sizes: messages produced, how many of them the
// zombie holds and writes slowly, how many it writes before the cut, how
// many more it tries once its successor has written, and its pace.
const (
	zombieProduced       = 400
	zombieHeld           = 300
	zombieBeforeCut      = 5
	zombieAfterSuccessor = 20
	zombiePace           = 50 * time.Millisecond
)

// TestIntegrationFencedSinkZombie: member A holds a batch of messages it
// was delivered and writes them slowly to the sink; it is cut off from
// ZooKeeper (through a proxy) after its first writes, and keeps writing.
// B joins, takes the partition once A's session expires and writes what
// it is delivered. A keeps writing until it has tried 20 more messages
// after B's first write.
//
// With the sink's epoch check, A writes no row after B's first write:
// every one of those writes is refused (and recorded as rejected). Without
// it, the same writes land: the test shows how many, and that there are
// some, so the scenario the check guards against really happens.
func TestIntegrationFencedSinkZombie(t *testing.T) {
	testenv.Integration(t)
	t.Run("checked", func(t *testing.T) {
		r := runZombie(t, true)
		t.Logf("checked sink: A wrote %d rows before B's first write, %d after it; %d of its writes refused; B wrote %d rows under epoch %d (A's %d); %d offsets written by both",
			r.aBefore, r.aAfter, r.aRejected, r.bRows, r.bEpoch, r.aEpoch, r.twice)
		if r.aAfter != 0 {
			t.Errorf("A wrote %d rows after B's first write, want 0: the epoch check let them through", r.aAfter)
		}
		if r.aRejected < zombieAfterSuccessor {
			t.Errorf("%d of A's writes refused, want at least the %d it tried after B's first write", r.aRejected, zombieAfterSuccessor)
		}
		if r.stored.Epoch != r.bEpoch {
			t.Errorf("the partition's row is at epoch %d, want B's %d", r.stored.Epoch, r.bEpoch)
		}
	})
	t.Run("unchecked", func(t *testing.T) {
		r := runZombie(t, false)
		t.Logf("unchecked sink: A wrote %d rows before B's first write and %d after it, which the check would have refused; B wrote %d rows under epoch %d (A's %d); %d offsets written by both",
			r.aBefore, r.aAfter, r.bRows, r.bEpoch, r.aEpoch, r.twice)
		if r.aAfter == 0 {
			t.Errorf("A wrote no row after B's first write: the zombie scenario did not happen")
		}
		if r.aRejected != 0 {
			t.Errorf("an unchecked sink refused %d writes", r.aRejected)
		}
	})
}

// zombieResult is what the sink holds after a zombie run.
type zombieResult struct {
	aEpoch, bEpoch  int64
	aBefore, aAfter int // rows A wrote before and after B's first row
	aRejected       int // A's writes refused
	bRows           int
	twice           int // offsets both wrote: delivery is at least once
	stored          PartitionRow
}

// runZombie runs the scenario on a topic, group and database of its own,
// with the sink's epoch check on or off.
func runZombie(t *testing.T, checked bool) zombieResult {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	topic, group := testenv.UniqueName("fenced"), testenv.UniqueName("fenced-g")
	testenv.CreateTopic(t, topic, 1)
	produce(t, topic, zombieProduced)
	path := filepath.Join(t.TempDir(), "sink.db")
	sinkA := openSink(t, path, "A", checked)
	sinkB := openSink(t, path, "B", checked)

	proxy, err := tcpproxy.New(testenv.ZKAddr())
	if err != nil {
		t.Fatal(err)
	}
	defer proxy.Close()
	cfgA := zombieConfig()
	cfgA.Zookeeper.Timeout = 3 * time.Second
	a, closeA := join(t, group, topic, proxy.Addr(), cfgA)
	defer func() {
		proxy.Restore() // A closes with its session gone, not cut off
		closeA()
	}()

	// A takes its batch, each message stamped with the epoch it came under.
	held := make([]*sarama.ConsumerMessage, 0, zombieHeld)
	var aEpoch int64
	for len(held) < zombieHeld {
		select {
		case m := <-a.Messages():
			e, ok := a.MessageEpoch(m)
			if !ok {
				t.Fatalf("A: offset %d delivered without an epoch", m.Offset)
			}
			aEpoch = e
			held = append(held, m)
		case <-time.After(30 * time.Second):
			t.Fatalf("A received %d of %d messages", len(held), zombieHeld)
		}
	}
	for _, m := range held[:zombieBeforeCut] {
		if err := sinkA.Write(ctx, aEpoch, m); err != nil {
			t.Fatalf("A before the cut: %v", err)
		}
		_ = a.CommitUpto(m)
	}

	// Cut A off; B joins and takes over once A's session expired. A goes
	// on writing what it holds, as a process that does not know yet.
	proxy.Cut()
	b, closeB := join(t, group, topic, testenv.ZKAddr(), zombieConfig())
	bDone := make(chan error, 1)
	go func() { _, err := consume(ctx, b, sinkB, 0); bDone <- err }()
	defer func() {
		cancel()
		<-bDone
		closeB()
	}()

	tried := 0 // A's writes since it saw B's first row
	for _, m := range held[zombieBeforeCut:] {
		bWrote := sinkA.count(t, `SELECT COUNT(*) FROM processed WHERE writer = 'B'`) > 0
		err := sinkA.Write(ctx, aEpoch, m)
		if err != nil && !errors.Is(err, ErrFenced) {
			t.Fatalf("A after the cut: %v", err)
		}
		if bWrote {
			if tried++; tried == zombieAfterSuccessor {
				break
			}
		}
		time.Sleep(zombiePace)
	}
	if tried < zombieAfterSuccessor {
		t.Fatalf("B wrote nothing while A wrote its %d held messages (%v): the scenario did not happen",
			zombieHeld, time.Duration(zombieHeld)*zombiePace)
	}

	var r zombieResult
	r.aEpoch = aEpoch
	s := sinkA
	firstB := s.count(t, `SELECT MIN(id) FROM processed WHERE writer = 'B'`)
	r.aBefore = s.count(t, `SELECT COUNT(*) FROM processed WHERE writer = 'A' AND id < ?`, firstB)
	r.aAfter = s.count(t, `SELECT COUNT(*) FROM processed WHERE writer = 'A' AND id > ?`, firstB)
	r.aRejected = s.count(t, `SELECT COUNT(*) FROM rejected WHERE writer = 'A'`)
	r.bRows = s.count(t, `SELECT COUNT(*) FROM processed WHERE writer = 'B'`)
	r.twice = s.count(t, `SELECT COUNT(*) FROM (SELECT offset FROM processed GROUP BY offset HAVING COUNT(DISTINCT writer) = 2)`)
	r.bEpoch = int64(s.count(t, `SELECT epoch FROM processed WHERE id = ?`, firstB))
	if r.bEpoch <= aEpoch {
		t.Errorf("B wrote under epoch %d, not above A's %d", r.bEpoch, aEpoch)
	}
	var ok bool
	if r.stored, ok, err = s.Partition(ctx, topic, 0); err != nil || !ok {
		t.Fatalf("the partition's row: %v, %v", ok, err)
	}
	return r
}

// zombieConfig is the members' configuration: quick commits and fetches.
func zombieConfig() *consumergroup.Config {
	cfg := consumergroup.NewConfig()
	cfg.Version = sarama.V2_8_0_0
	cfg.Offsets.Initial = sarama.OffsetOldest
	cfg.Offsets.ProcessingTimeout = 2 * time.Second
	cfg.Offsets.CommitInterval = 100 * time.Millisecond
	cfg.Consumer.MaxWaitTime = 100 * time.Millisecond
	return cfg
}

// join joins group through zk, logging the member's errors;
// leave closes it and waits for the last of them.
func join(t *testing.T, group, topic, zk string, cfg *consumergroup.Config) (cg *consumergroup.ConsumerGroup, leave func()) {
	t.Helper()
	cg, err := consumergroup.JoinConsumerGroup(group, []string{topic}, []string{zk}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	logged := make(chan struct{})
	go func() {
		defer close(logged)
		for err := range cg.Errors() {
			t.Logf("%s: %v", zk, err)
		}
	}()
	return cg, func() {
		if err := cg.Close(); err != nil {
			t.Logf("%s: close: %v", zk, err)
		}
		<-logged
	}
}

// openSink opens the sink at path for writer, closed when the test ends.
func openSink(t *testing.T, path, writer string, checked bool) *Sink {
	t.Helper()
	s, err := OpenSink(path, writer, checked)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// produce writes n numbered messages to the topic's partition 0.
func produce(t *testing.T, topic string, n int) {
	t.Helper()
	cfg := sarama.NewConfig()
	cfg.Producer.Return.Successes = true
	p, err := sarama.NewSyncProducer(testenv.KafkaAddrs(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	batch := make([]*sarama.ProducerMessage, n)
	for i := range batch {
		batch[i] = &sarama.ProducerMessage{Topic: topic, Partition: 0, Value: sarama.StringEncoder(fmt.Sprint(i))}
	}
	if err := p.SendMessages(batch); err != nil {
		t.Fatal(err)
	}
}
