package fetch

import (
	"context"
	"slices"
	"testing"

	"github.com/IBM/sarama"
)

type recordingInterceptor struct{ seen []int64 }

func (r *recordingInterceptor) OnConsume(m *sarama.ConsumerMessage) {
	r.seen = append(r.seen, m.Offset)
	m.Value = append([]byte("seen:"), m.Value...)
}

type panickingInterceptor struct{}

func (panickingInterceptor) OnConsume(*sarama.ConsumerMessage) { panic("interceptor bug") }

// The direct first fetch applies the configured interceptors, in order, to
// every message; a panicking one does not stop the others.
func TestApplyInterceptors(t *testing.T) {
	rec := &recordingInterceptor{}
	msgs := []*sarama.ConsumerMessage{{Offset: 5, Value: []byte("a")}, {Offset: 6, Value: []byte("b")}}
	applyInterceptors([]sarama.ConsumerInterceptor{panickingInterceptor{}, rec}, msgs)
	if len(rec.seen) != 2 || rec.seen[0] != 5 || rec.seen[1] != 6 {
		t.Fatalf("interceptor saw %v, want [5 6]", rec.seen)
	}
	if string(msgs[0].Value) != "seen:a" || string(msgs[1].Value) != "seen:b" {
		t.Fatalf("values after interceptors: %q %q", msgs[0].Value, msgs[1].Value)
	}
}

// The first fetch turns at most the want's limit of messages into
// ConsumerMessages, starting at the wanted offset (a batch can begin
// before it), across batches, in offset order.
func TestParseFirstBatchKeepsAtMostLimit(t *testing.T) {
	batch := func(first int64, n int) *sarama.Records {
		b := &sarama.RecordBatch{FirstOffset: first}
		for i := 0; i < n; i++ {
			b.Records = append(b.Records, &sarama.Record{OffsetDelta: int64(i), Value: []byte{byte(i)}})
		}
		return &sarama.Records{RecordBatch: b}
	}
	block := &sarama.FetchResponseBlock{RecordsSet: []*sarama.Records{batch(10, 5), batch(15, 5)}}
	for _, c := range []struct {
		offset int64
		limit  int
		want   []int64
	}{
		{offset: 12, limit: 4, want: []int64{12, 13, 14, 15}},
		{offset: 12, limit: 100, want: []int64{12, 13, 14, 15, 16, 17, 18, 19}},
		{offset: 18, limit: 0, want: []int64{18}}, // at least one
	} {
		msgs, err := parseFirstBatch(block, &fetchWant{topic: "t", partition: 3, offset: c.offset, limit: c.limit})
		if err != nil {
			t.Fatal(err)
		}
		var got []int64
		for _, m := range msgs {
			if m.Topic != "t" || m.Partition != 3 {
				t.Fatalf("message of %s/%d, want t/3", m.Topic, m.Partition)
			}
			got = append(got, m.Offset)
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("offset %d limit %d: got offsets %v, want %v", c.offset, c.limit, got, c.want)
		}
	}
}

// A round holds each partition once, and leaves out the wants whose caller
// stopped waiting, so a stopped feed's want does not delay the next feed's
// want of the same partition by a round.
func TestTakeDistinctDropsAbandonedWants(t *testing.T) {
	gone, cancel := context.WithCancel(context.Background())
	cancel()
	live := context.Background()
	wants := []*fetchWant{
		{ctx: gone, topic: "t", partition: 0, offset: 1},
		{ctx: live, topic: "t", partition: 0, offset: 5},
		{ctx: live, topic: "t", partition: 1, offset: 2},
		{ctx: live, topic: "t", partition: 0, offset: 6},
	}
	batch, rest := takeDistinct(wants)
	if len(batch) != 2 || batch[0].offset != 5 || batch[1].offset != 2 {
		t.Fatalf("batch %v, want the live wants at 5 and 2", offsetsOf(batch))
	}
	if len(rest) != 1 || rest[0].offset != 6 {
		t.Fatalf("rest %v, want [6]", offsetsOf(rest))
	}
}

func offsetsOf(wants []*fetchWant) []int64 {
	var o []int64
	for _, w := range wants {
		o = append(o, w.offset)
	}
	return o
}
