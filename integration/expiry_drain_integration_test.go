package integration

import (
	"slices"
	"testing"
	"time"

	"github.com/IBM/sarama"

	"github.com/zkgroup/kafka/consumergroup"
	"github.com/zkgroup/kafka/internal/tcpproxy"
	"github.com/zkgroup/kafka/internal/testenv"
)

// TestIntegrationExpiryWhileDraining: A holds messages it never marks, so a
// partition moving away from A drains until ProcessingTimeout (30 s here).
// While it drains, A's session expires. Nothing A marks from then on could
// be committed, so the drain must end at once: A registers again within the
// session timeout plus a second of the expiry, instead of staying out of
// the group for the rest of ProcessingTimeout.
func TestIntegrationExpiryWhileDraining(t *testing.T) {
	testenv.Integration(t)
	const (
		partitions = int32(4)
		session    = 3 * time.Second
	)
	topic := newTopic(t, partitions)
	produce(t, topic, 200)
	group := testenv.UniqueName("g")
	h := newHistory(t, group, topic, partitions)

	proxy, err := tcpproxy.New(testenv.ZKServers()[0])
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = proxy.Close() })

	cfgA := testConfig()
	cfgA.Zookeeper.Timeout = session
	cfgA.Offsets.ProcessingTimeout = 30 * time.Second
	cfgA.Claim.Budget = 40 * time.Second
	a := joinVia(t, proxy.Addr(), group, []string{topic}, cfgA)
	held := holdMessages(a) // reads, never marks
	waitFor(t, 30*time.Second, "A to deliver every partition", func() bool { return held.partitions() == int(partitions) })
	waitInstances(t, h, 1)
	idA := h.instances()[0]

	b := join(t, group, []string{topic}, nil)
	doneB := consume(t, 2, b, newLedger())
	t.Cleanup(func() {
		closeGroup(t, b)
		<-doneB
	})
	waitInstances(t, h, 2)
	time.Sleep(time.Second) // A drains the partitions moving to B, waiting for marks

	proxy.Cut()
	expired := firstAbsence(h.instances, idA, time.Now())
	if expired.IsZero() {
		t.Fatal("A's session did not expire")
	}
	proxy.Restore()
	var back time.Time
	waitFor(t, 40*time.Second, "A to register again", func() bool {
		if slices.Contains(h.instances(), idA) {
			back = time.Now()
			return true
		}
		return false
	})
	t.Logf("expiry while draining: A registered again %v after its session expired (session timeout %v, ProcessingTimeout %v)",
		back.Sub(expired).Round(time.Millisecond), session, cfgA.Offsets.ProcessingTimeout)
	if d := back.Sub(expired); d > session+time.Second {
		t.Errorf("A registered again %v after the expiry, want within the session timeout + 1 s (%v)", d, session+time.Second)
	}
	closeGroup(t, a)
	<-held.done
}

// heldMessages reads a group's messages and errors without ever marking.
type heldMessages struct {
	done <-chan struct{}
	seen chan int32
	got  map[int32]bool
}

func holdMessages(cg *consumergroup.ConsumerGroup) *heldMessages {
	h := &heldMessages{seen: make(chan int32, 1024), got: map[int32]bool{}}
	h.done = drainGroup(cg, func(m *sarama.ConsumerMessage) {
		select {
		case h.seen <- m.Partition:
		default:
		}
	}, func(error) {})
	return h
}

// partitions counts the partitions seen so far (test goroutine only).
func (h *heldMessages) partitions() int {
	for {
		select {
		case p := <-h.seen:
			h.got[p] = true
		default:
			return len(h.got)
		}
	}
}
