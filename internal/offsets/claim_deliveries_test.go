package offsets

import (
	"testing"

	"github.com/IBM/sarama"
)

// Above what earlier claims offered, every offset this claim offered is
// its own; at or below it, only the very messages it offered.
func TestClaimDeliveries(t *testing.T) {
	d := newClaimDeliveries(20)
	mine := &sarama.ConsumerMessage{Offset: 15}
	theirs := &sarama.ConsumerMessage{Offset: 15}
	above := &sarama.ConsumerMessage{Offset: 21}
	d.Offered(mine)
	d.Offered(above)
	for _, c := range []struct {
		name string
		m    *sarama.ConsumerMessage
		want bool
	}{
		{"offered at an overlapping offset", mine, true},
		{"an earlier claim's at that offset", theirs, false},
		{"offered above the overlap", above, true},
		{"above the overlap, not offered yet", &sarama.ConsumerMessage{Offset: 22}, false},
		{"below, never offered here", &sarama.ConsumerMessage{Offset: 3}, false},
	} {
		if got := d.Delivered(c.m); got != c.want {
			t.Errorf("%s: Delivered = %v, want %v", c.name, got, c.want)
		}
	}
	if h := d.Highest(); h != 21 {
		t.Errorf("Highest = %d, want 21", h)
	}
}

// A Committer hands each new claim of a partition the highest offset its
// earlier claims offered, also when a claim is adopted over one never
// dropped.
func TestCommitterRemembersEarlierClaimsOffers(t *testing.T) {
	c := New(Config{}, Deps{})
	tp := TopicPartition{Topic: "t", Partition: 0}
	st := Stored{ZkNext: 0, ZkVersion: -1, KafkaNext: -1}
	first := c.Adopt(tp, nil, st, nil)
	first.OfferMessage(&sarama.ConsumerMessage{Offset: 30})
	second := c.Adopt(tp, nil, st, nil) // over first, without a Drop
	if got := second.deliveries.earlierMax.Load(); got != 30 {
		t.Errorf("second claim: earlier offers up to %d, want 30", got)
	}
	second.OfferMessage(&sarama.ConsumerMessage{Offset: 12})
	c.Drop(second)
	third := c.Adopt(tp, nil, st, nil)
	if got := third.deliveries.earlierMax.Load(); got != 30 {
		t.Errorf("third claim: earlier offers up to %d, want 30 (the highest of all)", got)
	}
}
