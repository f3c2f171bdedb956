package fetch

import (
	"bytes"
	"context"
	"runtime"
	"testing"
	"time"

	"github.com/IBM/sarama"
)

func TestDetachMessagesCopiesAndKeepsNil(t *testing.T) {
	buf := []byte("keyvaluehkhv")
	msgs := []*sarama.ConsumerMessage{
		{Key: buf[0:3], Value: buf[3:8], Headers: []*sarama.RecordHeader{{Key: buf[8:10], Value: buf[10:12]}}},
		{Key: nil, Value: buf[3:3]},
	}
	detachMessages(msgs)
	copy(buf, bytes.Repeat([]byte("x"), len(buf))) // the response buffer is reused or freed
	m := msgs[0]
	if string(m.Key) != "key" || string(m.Value) != "value" || string(m.Headers[0].Key) != "hk" || string(m.Headers[0].Value) != "hv" {
		t.Fatalf("detached message changed with the response: %q %q %q %q", m.Key, m.Value, m.Headers[0].Key, m.Headers[0].Value)
	}
	if msgs[1].Key != nil || msgs[1].Value == nil || len(msgs[1].Value) != 0 {
		t.Fatalf("nil and empty not kept apart: key %v value %v", msgs[1].Key, msgs[1].Value)
	}
	// appending to one field never writes into the next
	m.Key = append(m.Key, 'z')
	if string(m.Value) != "value" {
		t.Fatalf("fields share capacity: value now %q", m.Value)
	}
}

// A batch that waits for a slow reader must pin only what the feed budget
// counts for it (its keys and values), not the whole response its round
// shared with other partitions.
func TestBatchWaitingForASlowReaderPinsOnlyItself(t *testing.T) {
	const size = 4 << 20
	res := &sarama.FetchResponse{Version: fetchVersion(sarama.V2_8_0_0)}
	for p := int32(0); p < 3; p++ {
		res.AddRecordBatch("t", p, nil, sarama.ByteEncoder(bytes.Repeat([]byte{byte('a' + p)}, size)), 0, 0, false)
		res.GetBlock("t", p).HighWaterMarkOffset = 1
	}
	f, broker := starvedFetcher(t, res)
	answers, _ := runRound(t, f, broker, 0, 1, 2)
	if !answers[0].shared {
		t.Fatal("a result of a response that fed three partitions is not marked shared")
	}
	kept := handOverSlowly(t, answers[0], 2*detachAfter)
	answers = nil
	if len(kept) != 1 || len(kept[0].Value) != size || kept[0].Value[size-1] != 'a' {
		t.Fatalf("partition 0's message not read whole")
	}
	counted := heldBytes(kept)
	with := heapInUse()
	runtime.KeepAlive(kept)
	kept = nil
	pinned := with - heapInUse()
	t.Logf("partition 0 counted %d bytes, pins %d", counted, pinned)
	if pinned > counted*3/2 {
		t.Fatalf("partition 0's one message (%d bytes counted) keeps %d bytes alive: the whole shared response", counted, pinned)
	}
}

// A batch its reader takes at once is not copied: the copy would only add
// allocations.
func TestBatchTakenAtOnceIsNotCopied(t *testing.T) {
	buf := []byte("value")
	r := fetchResult{msgs: []*sarama.ConsumerMessage{{Value: buf}}, shared: true}
	msgs := handOverSlowly(t, r, 0)
	buf[0] = 'V'
	if string(msgs[0].Value) != "Value" {
		t.Fatalf("a batch taken at once was copied: %q", msgs[0].Value)
	}
}

// handOverSlowly hands r over through a batch feed whose reader comes
// after wait, and returns the messages the reader got.
func handOverSlowly(t *testing.T, r fetchResult, wait time.Duration) []*sarama.ConsumerMessage {
	t.Helper()
	feed := &batchFeed{batches: make(chan fetchResult)}
	done := make(chan bool, 1)
	go func() { done <- feed.handOver(context.Background(), &r) }()
	time.Sleep(wait)
	got := <-feed.batches
	if !<-done {
		t.Fatal("handOver gave up")
	}
	return got.msgs
}

func heapInUse() int64 {
	runtime.GC()
	runtime.GC()
	var s runtime.MemStats
	runtime.ReadMemStats(&s)
	return int64(s.HeapAlloc)
}
