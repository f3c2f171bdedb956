package offsets

import (
	"testing"

	"github.com/IBM/sarama"
)

// offer offers m as the worker's pump does.
func offer(o *Partition, m *sarama.ConsumerMessage) {
	o.Offer(m.Offset)
	o.OfferMessage(m)
}

// A claim adopted after an earlier one offered up to 20 owns every offset
// above 20 it offered, and at or below 20 only the very messages it
// offered, also after a restart of its own moved it back.
func TestDeliveredUnderClaim(t *testing.T) {
	c := New(Config{}, Deps{})
	tp := TopicPartition{Topic: "t", Partition: 0}
	st := Stored{ZkNext: 10, ZkVersion: -1, KafkaNext: -1}
	earlier := c.Adopt(tp, nil, st, nil)
	theirs := &sarama.ConsumerMessage{Offset: 15}
	offer(earlier, theirs)
	offer(earlier, &sarama.ConsumerMessage{Offset: 20})
	c.Drop(earlier)

	o := c.Adopt(tp, nil, st, nil)
	mine := &sarama.ConsumerMessage{Offset: 15}
	above := &sarama.ConsumerMessage{Offset: 25}
	offer(o, mine)
	offer(o, above)
	o.Restart(12) // a seek back within the claim: what it offered stays its own
	offer(o, &sarama.ConsumerMessage{Offset: 12})
	for _, c := range []struct {
		name string
		m    *sarama.ConsumerMessage
		want bool
	}{
		{"offered at an overlapping offset", mine, true},
		{"the earlier claim's at that offset", theirs, false},
		{"offered above the overlap, before the seek", above, true},
		{"above the overlap, not offered yet", &sarama.ConsumerMessage{Offset: 26}, false},
		{"below, never offered by this claim", &sarama.ConsumerMessage{Offset: 3}, false},
	} {
		if got := o.DeliveredUnderClaim(c.m); got != c.want {
			t.Errorf("%s: DeliveredUnderClaim = %v, want %v", c.name, got, c.want)
		}
	}
	if (&Partition{}).DeliveredUnderClaim(mine) {
		t.Error("a Partition not adopted by a Committer: DeliveredUnderClaim true")
	}
}

// A Committer hands each new claim of a partition the highest offset its
// earlier claims offered, also when a claim is adopted over one never
// dropped, and after a claim that restarted lower.
func TestCommitterRemembersEarlierClaimsOffers(t *testing.T) {
	c := New(Config{}, Deps{})
	tp := TopicPartition{Topic: "t", Partition: 0}
	st := Stored{ZkNext: 0, ZkVersion: -1, KafkaNext: -1}
	first := c.Adopt(tp, nil, st, nil)
	offer(first, &sarama.ConsumerMessage{Offset: 30})
	first.Restart(5)
	offer(first, &sarama.ConsumerMessage{Offset: 6})
	second := c.Adopt(tp, nil, st, nil) // over first, without a Drop
	if got := second.deliveries.earlierMax; got != 30 {
		t.Errorf("second claim: earlier offers up to %d, want 30", got)
	}
	offer(second, &sarama.ConsumerMessage{Offset: 12})
	c.Drop(second)
	third := c.Adopt(tp, nil, st, nil)
	if got := third.deliveries.earlierMax; got != 30 {
		t.Errorf("third claim: earlier offers up to %d, want 30 (the highest of all)", got)
	}
}
