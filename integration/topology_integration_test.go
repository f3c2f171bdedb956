package integration

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/IBM/sarama"

	"github.com/zkgroup/kafka/internal/testenv"
)

// TestIntegrationPartitionsAdded: partitions added to a subscribed topic
// are picked up (the partition map is watched) without a membership change.
func TestIntegrationPartitionsAdded(t *testing.T) {
	testenv.Integration(t)
	topic := newTopic(t, 2)
	group := testenv.UniqueName("g")
	l := newLedger()
	h := recordDeliveries(t, group, topic, 4, l) // 2 partitions now, 4 after the addition
	cg := join(t, group, []string{topic}, nil)
	done := consume(t, 1, cg, l)

	admin, err := sarama.NewClusterAdmin(testenv.KafkaAddrs(), saramaConfig())
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	if err := admin.CreatePartitions(topic, 4, nil, false); err != nil {
		t.Fatalf("add partitions: %v", err)
	}
	time.Sleep(time.Second) // let the new partitions get leaders
	counts := produce(t, topic, 400)
	if len(counts) != 4 {
		t.Fatalf("produced to %d partitions, want 4", len(counts))
	}
	waitFor(t, 60*time.Second, "messages of the added partitions", func() bool { return l.distinct() >= 400 })
	closeGroup(t, cg)
	<-done
	if m := l.missing(topic, counts); m != 0 {
		t.Errorf("%d messages never delivered", m)
	}
	h.assert(expectation{produced: counts})
}

// TestIntegrationOffsetOutOfRange: a stored offset beyond the log is reported
// on Errors() and consumption restarts at Offsets.Initial (oldest), so no
// message is skipped.
func TestIntegrationOffsetOutOfRange(t *testing.T) {
	testenv.Integration(t)
	topic := newTopic(t, 1)
	counts := produce(t, topic, 50)
	group := testenv.UniqueName("g")

	kz := zkClient(t)
	h := newHistory(t, group, topic, 1)
	if err := kz.Consumergroup(group).CommitOffset(topic, 0, 1_000_000); err != nil {
		t.Fatal(err)
	}
	h.reset(0, 0) // the group's own: it restarts at the oldest offset and commits from there

	cg := join(t, group, []string{topic}, nil)
	defer closeGroup(t, cg)
	reported := false
	got := 0
	deadline := time.After(60 * time.Second)
	for got < int(counts[0]) || !reported {
		select {
		case m := <-cg.Messages():
			if m.Offset != int64(got) {
				t.Fatalf("got offset %d, want %d (restart at the oldest offset)", m.Offset, got)
			}
			got++
			h.delivered(1, m)
			_ = cg.CommitUpto(m)
		case err := <-cg.Errors():
			var pe *sarama.ConsumerError
			if errors.As(err, &pe) && pe.Topic == topic && strings.Contains(err.Error(), "out of range") {
				reported = true
				t.Logf("reported: %v", err)
			} else {
				t.Logf("other error: %v", err)
			}
		case <-deadline:
			t.Fatalf("after 60s: %d messages, reported=%v", got, reported)
		}
	}
	if err := cg.FlushOffsets(); err != nil {
		t.Fatalf("flush: %v", err)
	}
	if off, err := kz.Consumergroup(group).FetchOffset(topic, 0); err != nil || off != counts[0] {
		t.Errorf("stored offset %d (%v), want %d", off, err, counts[0])
	}
	h.assert(expectation{produced: counts})
}
