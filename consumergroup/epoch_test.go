package consumergroup

import (
	"testing"

	"github.com/IBM/sarama"

	"github.com/zkgroup/kafka/internal/offsets"
)

// foreignClaim is a sarama.ConsumerGroupClaim that is not HandlerGroup's.
type foreignClaim struct{ sarama.ConsumerGroupClaim }

// offer offers m on o as the partition's worker does.
func offer(o *offsets.Partition, m *sarama.ConsumerMessage) {
	o.Offer(m.Offset)
	o.OfferMessage(m)
}

// A claim that is not HandlerGroup's has no epoch.
func TestClaimEpochOfForeignClaim(t *testing.T) {
	for _, c := range []sarama.ConsumerGroupClaim{nil, foreignClaim{}, (*handlerClaim)(nil)} {
		if e, ok := ClaimEpoch(c); ok {
			t.Errorf("ClaimEpoch(%T) = %d, true; want false", c, e)
		}
	}
}

// Epoch is the current claim's; MessageEpoch the epoch of the claim that
// delivered the message, and nothing once that claim is over: a message
// delivered under epoch 5, then the partition released and claimed again
// with epoch 7 at the same offsets, never gets 7, while the same offset
// delivered again under 7 does.
func TestMessageEpochIsTheDeliveringClaims(t *testing.T) {
	cg := stateTestGroup()
	om := cg.offsetManager
	tp := topicPartition{"t", 0}
	msg := func(offset int64) *sarama.ConsumerMessage {
		return &sarama.ConsumerMessage{Topic: tp.Topic, Partition: tp.Partition, Offset: offset}
	}
	check := func(what string, m *sarama.ConsumerMessage, want int64, wantOK bool) {
		t.Helper()
		if e, ok := cg.MessageEpoch(m); e != want || ok != wantOK {
			t.Errorf("%s: MessageEpoch = %d, %v; want %d, %v", what, e, ok, want, wantOK)
		}
	}

	first := om.claimAt(tp, 5, 10)
	old10, old11 := msg(10), msg(11)
	offer(first, old10)
	offer(first, old11)
	if e, ok := cg.Epoch(tp.Topic, tp.Partition); e != 5 || !ok {
		t.Errorf("Epoch = %d, %v; want 5, true", e, ok)
	}
	if _, ok := cg.Epoch(tp.Topic, 1); ok {
		t.Error("Epoch of a partition not owned: ok, want false")
	}
	check("delivered under 5", old10, 5, true)
	check("an offset not delivered yet", msg(12), 0, false)
	check("another partition's", &sarama.ConsumerMessage{Topic: "t", Partition: 1, Offset: 10}, 0, false)
	check("nil", nil, 0, false)

	om.Drop(first) // released
	check("after the release", old10, 0, false)
	if _, ok := cg.Epoch(tp.Topic, tp.Partition); ok {
		t.Error("Epoch after the release: ok, want false")
	}

	second := om.claimAt(tp, 7, 10) // claimed again, from the same offset
	new10 := msg(10)
	offer(second, new10)
	check("offset 10 delivered under 5, asked under 7", old10, 0, false)
	check("offset 11 delivered under 5, not yet again under 7", old11, 0, false)
	check("offset 10 delivered again under 7", new10, 7, true)
	offer(second, msg(11))
	check("offset 11 delivered under 5, then again under 7", old11, 0, false)
	new12 := msg(12)
	offer(second, new12)
	check("an offset only 7 delivered", new12, 7, true)

	second.SetLost()
	check("after the claim was lost", new12, 0, false)
}

// After Close nothing has an epoch.
func TestEpochAfterClose(t *testing.T) {
	cg := stateTestGroup()
	o := cg.offsetManager.claimAt(topicPartition{"t", 0}, 3, 0)
	m := &sarama.ConsumerMessage{Topic: "t", Partition: 0, Offset: 0}
	offer(o, m)
	cg.closed.Store(true)
	if _, ok := cg.Epoch("t", 0); ok {
		t.Error("Epoch after Close: ok, want false")
	}
	if _, ok := cg.MessageEpoch(m); ok {
		t.Error("MessageEpoch after Close: ok, want false")
	}
}
