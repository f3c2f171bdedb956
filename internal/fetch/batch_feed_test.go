package fetch

import (
	"context"
	"errors"
	"slices"
	"sync/atomic"
	"testing"

	"github.com/IBM/sarama"
)

// A fetch response's high-water mark reaches the worker, so lag and the
// handler claim's HighWaterMarkOffset count the backlog behind a batch, not
// just the batch, and an idle partition's long polls keep it current.
func TestBatchFeedCarriesHighWaterMark(t *testing.T) {
	batch := &sarama.RecordBatch{FirstOffset: 10, LastOffsetDelta: 2}
	for i := range 3 {
		batch.Records = append(batch.Records, &sarama.Record{OffsetDelta: int64(i), Value: []byte{byte(i)}})
	}
	block := &sarama.FetchResponseBlock{HighWaterMarkOffset: 5000, RecordsSet: []*sarama.Records{{RecordBatch: batch}}}
	first := parseRecords(block, &fetchWant{topic: "t", partition: 0, offset: 10, limit: 100})
	if first.err != nil {
		t.Fatal(first.err)
	}
	if first.hwm != 5000 {
		t.Fatalf("fetch result high-water mark %d, want the response's 5000", first.hwm)
	}
	// The batch, then long polls without messages: a later mark replaces
	// it, also a lower one (a truncated log); an answer without one, or a
	// failed fetch (which ends this feed), leaves it.
	answers := []fetchResult{first, {next: 13, hwm: 4000}, {next: 13}, {err: sarama.ErrOffsetOutOfRange, hwm: 7}}
	checked := make(chan struct{}) // the mark with the batch was read
	fetch := func(ctx context.Context, _ bool, _ int64, _ int32) fetchResult {
		if len(answers) < 4 {
			select {
			case <-checked:
			case <-ctx.Done():
				return fetchResult{err: ctx.Err()}
			}
		}
		r := answers[0]
		answers = answers[1:]
		return r
	}
	var mark atomic.Int64
	mark.Store(9)
	f := newBatchFeed(context.Background(), fetch, nil, &mark, 1000, 0, newFeedBudget(1<<20), 10)
	defer f.stop()
	if b := <-f.batches; b.err != nil || len(b.msgs) != 3 {
		t.Fatalf("first batch: %d messages, err %v", len(b.msgs), b.err)
	}
	got := mark.Load()
	close(checked)
	if got != 5000 {
		t.Fatalf("worker high-water mark %d with the batch, want 5000", got)
	}
	if b := <-f.batches; !errors.Is(b.err, sarama.ErrOffsetOutOfRange) {
		t.Fatalf("the feed ended with %v, want the fetch's error", b.err)
	}
	if got := mark.Load(); got != 4000 {
		t.Fatalf("worker high-water mark %d after the long polls and the failed fetch, want the last answer's 4000", got)
	}
}

// sizedFetch is a partition whose record batch at offset 0 needs a fetch
// size of need bytes; it records the sizes asked for. After the batch it
// has nothing more: a fetch past it waits for the feed to stop.
type sizedFetch struct {
	need  int32
	sizes chan int32
}

func (s *sizedFetch) fetch(ctx context.Context, _ bool, offset int64, size int32) fetchResult {
	s.sizes <- size
	if offset > 0 {
		<-ctx.Done()
		return fetchResult{err: ctx.Err()}
	}
	if size < s.need {
		return fetchResult{err: errPartialBatch, hwm: 1}
	}
	return fetchResult{msgs: []*sarama.ConsumerMessage{{Offset: 0, Value: []byte("big")}}, next: 1, hwm: 1}
}

// A record batch larger than the fetch size is fetched again with the size
// doubled, up to Consumer.Fetch.Max, instead of ending the feed; once read,
// the next fetch goes back to Consumer.Fetch.Default.
func TestBatchFeedGrowsFetchSize(t *testing.T) {
	s := &sizedFetch{need: 3500, sizes: make(chan int32, 10)}
	f := newBatchFeed(context.Background(), s.fetch, nil, nil, 1000, 0, newFeedBudget(1<<20), 0)
	b := <-f.batches
	if b.err != nil || len(b.msgs) != 1 {
		t.Fatalf("feed handed on %d messages, err %v; want the large batch", len(b.msgs), b.err)
	}
	f.taken(b)
	f.handedOut()
	want := []int32{1000, 2000, 4000, 1000}
	for i, w := range want {
		if got := <-s.sizes; got != w {
			t.Fatalf("fetch %d asked for %d bytes, want %d (sizes %v)", i, got, w, want)
		}
	}
	if err := f.stop(); err != nil {
		t.Fatalf("feed ended with %v", err)
	}
}

// Capped by Consumer.Fetch.Max, a batch that does not fit ends the feed
// with errPartialBatch (the worker then falls back to sarama's partition
// consumer, which reports it as too large).
func TestBatchFeedFetchSizeCapped(t *testing.T) {
	s := &sizedFetch{need: 5000, sizes: make(chan int32, 10)}
	f := newBatchFeed(context.Background(), s.fetch, nil, nil, 1000, 3000, newFeedBudget(1<<20), 0)
	b := <-f.batches
	if !errors.Is(b.err, errPartialBatch) {
		t.Fatalf("feed handed on %d messages, err %v; want errPartialBatch", len(b.msgs), b.err)
	}
	if err := f.stop(); !errors.Is(err, errPartialBatch) {
		t.Fatalf("feed ended with %v, want errPartialBatch", err)
	}
	close(s.sizes)
	var got []int32
	for size := range s.sizes {
		got = append(got, size)
	}
	if !slices.Equal(got, []int32{1000, 2000, 3000}) {
		t.Fatalf("fetch sizes %v, want [1000 2000 3000]", got)
	}
}

// grownFetchSize doubles, caps at max (0: none), and survives overflow.
func TestGrownFetchSize(t *testing.T) {
	for _, c := range []struct {
		size, max, want int32
		ok              bool
	}{
		{1024, 0, 2048, true},
		{1024, 1500, 1500, true},
		{1500, 1500, 1500, false},
		{1 << 30, 0, 1<<31 - 1, true},
		{1<<31 - 1, 0, 1<<31 - 1, false},
	} {
		got, ok := grownFetchSize(c.size, c.max)
		if got != c.want || ok != c.ok {
			t.Errorf("grownFetchSize(%d, %d) = %d, %v; want %d, %v", c.size, c.max, got, ok, c.want, c.ok)
		}
	}
}

// A response whose first record batch at the offset is cut off by the
// fetch size reads as errPartialBatch, so the feed grows the size, not as
// an empty answer that would be fetched again the same way forever.
func TestParseRecordsPartialBatchAtOffset(t *testing.T) {
	cut := &sarama.RecordBatch{FirstOffset: 7, PartialTrailingRecord: true}
	block := &sarama.FetchResponseBlock{HighWaterMarkOffset: 20, RecordsSet: []*sarama.Records{{RecordBatch: cut}}}
	if r := parseRecords(block, &fetchWant{offset: 7, limit: 10}); !errors.Is(r.err, errPartialBatch) {
		t.Fatalf("parse: %d messages, next %d, err %v; want errPartialBatch", len(r.msgs), r.next, r.err)
	}
	whole := &sarama.RecordBatch{FirstOffset: 7, LastOffsetDelta: 0, Records: []*sarama.Record{{Value: []byte("a")}}}
	block.RecordsSet = []*sarama.Records{{RecordBatch: whole}, {RecordBatch: &sarama.RecordBatch{FirstOffset: 8, PartialTrailingRecord: true}}}
	if r := parseRecords(block, &fetchWant{offset: 7, limit: 10}); r.err != nil || len(r.msgs) != 1 || r.next != 8 {
		t.Fatalf("parse: %d messages, next %d, err %v; want 1 message, next 8", len(r.msgs), r.next, r.err)
	}
}
