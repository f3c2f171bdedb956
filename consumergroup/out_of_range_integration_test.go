package consumergroup

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/IBM/sarama"

	"github.com/zkgroup/kafka/internal/testenv"
)

// DeleteRecords removes messages the group has not read yet, mid-stream:
// the group reports a *RetentionError with the position it was reading at
// and the log's new start, and resumes there. Before, the partition fell
// back to sarama's partition consumer, whose open went to Offsets.Initial
// (oldest: the new start, unreported; newest: everything after it skipped).
// Both paths, the batch feed and sarama's partition consumer, behave so.
func TestIntegrationRetentionBelowPosition(t *testing.T) {
	for _, batches := range []bool{true, false} {
		name := "sarama-consumer"
		if batches {
			name = "batch-feed"
		}
		t.Run(name, func(t *testing.T) { retentionBelowPosition(t, batches) })
	}
}

func retentionBelowPosition(t *testing.T, batches bool) {
	testenv.Integration(t)
	const total, deleted = 100, 60
	topic := testenv.UniqueName("retention")
	testenv.CreateTopic(t, topic, 1)
	pcfg := sarama.NewConfig()
	pcfg.Producer.Return.Successes = true
	prod, err := sarama.NewSyncProducer(testenv.KafkaAddrs(), pcfg)
	if err != nil {
		t.Fatal(err)
	}
	defer prod.Close()
	value := sarama.StringEncoder(strings.Repeat("v", 1000))
	for range total { // one record batch each: DeleteRecords cuts between any two
		if _, _, err := prod.SendMessage(&sarama.ProducerMessage{Topic: topic, Value: value}); err != nil {
			t.Fatal(err)
		}
	}

	cfg := fenceTestConfig()
	cfg.Fetch.Batches = batches
	cfg.Consumer.Fetch.Default = 2048 // a couple of messages a fetch: the group reads not far ahead
	cfg.ChannelBufferSize = 1
	cfg.Consumer.Retry.Backoff = 100 * time.Millisecond
	cg, err := JoinConsumerGroup(testenv.UniqueName("retention-g"), []string{topic}, []string{testenv.ZKAddr()}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer cg.Close()
	retained := make(chan *RetentionError, 1)
	go func() {
		for err := range cg.Errors() {
			var ret *RetentionError
			if errors.As(err, &ret) {
				retained <- ret
				continue
			}
			t.Logf("error: %v", err)
		}
	}()

	var got []int64
	take := func() *sarama.ConsumerMessage {
		t.Helper()
		select {
		case m := <-cg.Messages():
			got = append(got, m.Offset)
			if err := cg.CommitUpto(m); err != nil {
				t.Fatal(err)
			}
			return m
		case <-time.After(20 * time.Second):
			t.Fatalf("no message in 20 s after offsets %v", got)
			return nil
		}
	}
	for range 10 { // a slow handler: 10 read, a few more fetched
		take()
	}
	admin, err := sarama.NewClusterAdmin(testenv.KafkaAddrs(), cfg.Config)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	if err := admin.DeleteRecords(topic, map[int32]int64{0: deleted}); err != nil {
		t.Fatal(err)
	}
	for got[len(got)-1] < total-1 {
		take()
	}
	var ret *RetentionError
	select {
	case ret = <-retained:
	case <-time.After(5 * time.Second):
		t.Fatalf("no *RetentionError reported; offsets read %v", got)
	}
	if ret.Topic != topic || ret.Partition != 0 || ret.LogStart != deleted || ret.Position < 10 || ret.Position >= deleted {
		t.Fatalf("reported %+v, want %s/0 at a position in [10, %d), log start %d", ret, topic, deleted, deleted)
	}
	t.Logf("reported: %v", ret)
	// Every offset up to the position (fetched before the deletion), then
	// every one from the log's new start: nothing after it skipped.
	var want []int64
	for o := int64(0); o < ret.Position; o++ {
		want = append(want, o)
	}
	for o := int64(deleted); o < total; o++ {
		want = append(want, o)
	}
	if len(got) != len(want) {
		t.Fatalf("offsets read %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("offsets read %v, want %v", got, want)
		}
	}
}
