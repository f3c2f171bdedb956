package fetch

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/IBM/sarama"
	"github.com/rcrowley/go-metrics"
)

// outOfRangeFetch is a v12 fetch response answering t/0 with
// OFFSET_OUT_OF_RANGE.
func outOfRangeFetch() *sarama.FetchResponse {
	res := &sarama.FetchResponse{Version: fetchVersion(testVersion)}
	res.AddError("t", 0, sarama.ErrOffsetOutOfRange)
	return res
}

// offsetsFetch is a fetch response holding one record batch per offset
// in [from, to) of t/0, with a high-water mark of to and no preferred read
// replica (sarama's partition consumer would look for broker 0).
func offsetsFetch(from, to int64) *sarama.FetchResponse {
	res := &sarama.FetchResponse{Version: fetchVersion(testVersion)}
	res.AddError("t", 0, sarama.ErrNoError)
	for o := from; o < to; o++ {
		res.AddRecordBatch("t", 0, nil, sarama.StringEncoder(fmt.Sprint(o)), o, 0, false)
	}
	res.GetBlock("t", 0).HighWaterMarkOffset = to
	res.GetBlock("t", 0).PreferredReadReplica = -1
	return res
}

// testVersion is the Kafka version of the tests: Fetch v12.
var testVersion = sarama.V2_8_0_0

// logRange answers the offset requests of t/0 with the log's start and end.
func logRange(t *testing.T, start, end int64) sarama.MockResponse {
	return sarama.NewMockOffsetResponse(t).
		SetOffset("t", 0, sarama.OffsetOldest, start).
		SetOffset("t", 0, sarama.OffsetNewest, end)
}

// outOfRangeEngine is an engine on broker, leader of t/0 with offsets 0-4
// (see movingLeaderFetch), reading with the batch feed when batches is
// set; retries counts its feed's retries.
func outOfRangeEngine(t *testing.T, broker *sarama.MockBroker, batches bool) (e *Engine, reported *[]error, retries metrics.Counter) {
	broker.SetLatency(5 * time.Millisecond) // idle fetches at 5 come back at once: no hot loop
	broker.SetHandlerByMap(map[string]sarama.MockResponse{
		"MetadataRequest": leaderMetadata(t, broker, broker),
		"OffsetRequest":   logRange(t, 0, 5),
		// sarama's partition consumer, after a prefix of 2, fetches at 2;
		// later fetches find nothing (sarama's consumer would step once
		// for each batch below its offset)
		"FetchRequest": sarama.NewMockSequence(offsetsFetch(0, 5), offsetsFetch(2, 5), offsetsFetch(5, 5)),
	})
	conf := sarama.NewConfig()
	conf.Version = testVersion
	conf.ApiVersionsRequest = false // the mock broker does not answer it
	conf.Metadata.Retry.Max = 0
	conf.Consumer.Retry.Backoff = 10 * time.Millisecond
	conf.Consumer.Return.Errors = true
	conf.ChannelBufferSize = 2
	client, err := sarama.NewClient([]string{broker.Addr()}, conf)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = client.Close() })
	consumer, err := sarama.NewConsumerFromClient(client)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = consumer.Close() })
	reported = new([]error)
	retries = &metrics.StandardCounter{} // NewCounter counts nothing under UseNilMetrics
	e = NewEngine(Config{Config: conf, Batches: batches}, Deps{Client: client, Consumer: consumer,
		Report: func(err error) { *reported = append(*reported, err) }, FeedRetries: retries})
	t.Cleanup(e.Close)
	return e, reported, retries
}

// readToFive opens t/0 at 0 and reads offsets 0-4 from it.
func readToFive(t *testing.T, p *Partition) Source {
	t.Helper()
	src, err := p.Open(0)
	if err != nil {
		t.Fatal(err)
	}
	for o := int64(0); o < 5; o++ {
		next(t, src, o)
	}
	return src
}

// sourceEnd waits for src to end and returns its error.
func sourceEnd(t *testing.T, src Source) error {
	t.Helper()
	wake := make(chan struct{})
	timer := time.AfterFunc(10*time.Second, func() { close(wake) })
	defer timer.Stop()
	m, err := src.Next(wake)
	if m != nil || err == nil {
		t.Fatalf("Next = %v, %v; want the source's end", m, err)
	}
	return err
}

// A fetch at a position the feed reached answers OFFSET_OUT_OF_RANGE: the
// leader's log ends below it (truncated) or starts above it (retention).
// The feed does not fall back to sarama's partition consumer (whose open
// would go to Offsets.Initial): it ends with the typed error naming the
// position and where to resume, which Close returns too, and the next
// Open reads through the feed again.
func TestFeedOutOfRangeMidStream(t *testing.T) {
	cases := []struct {
		name       string
		start, end int64 // the log's range after the fetch failed
		want       func(t *testing.T, err error)
		resume     int64
	}{
		{"truncated", 0, 2, func(t *testing.T, err error) {
			var trunc *TruncationError
			if !errors.As(err, &trunc) || trunc.Position != 5 || trunc.LogEnd != 2 || trunc.Topic != "t" || trunc.Partition != 0 {
				t.Fatalf("the feed ended with %v, want a *TruncationError at 5, log end 2", err)
			}
		}, 2},
		{"retention", 8, 12, func(t *testing.T, err error) {
			var ret *RetentionError
			if !errors.As(err, &ret) || ret.Position != 5 || ret.LogStart != 8 {
				t.Fatalf("the feed ended with %v, want a *RetentionError at 5, log start 8", err)
			}
		}, 8},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			broker := sarama.NewMockBroker(t, 1)
			defer broker.Close()
			e, reported, _ := outOfRangeEngine(t, broker, true)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			p := e.Partition(ctx, "t", 0, nil, nil)
			src := readToFive(t, p)
			broker.SetHandlerByMap(map[string]sarama.MockResponse{
				"MetadataRequest": leaderMetadata(t, broker, broker),
				"OffsetRequest":   logRange(t, c.start, c.end),
				"FetchRequest":    sarama.NewMockWrapper(outOfRangeFetch()),
			})
			err := sourceEnd(t, src)
			if !errors.Is(err, ErrSourceEnded) || !errors.Is(err, sarama.ErrOffsetOutOfRange) {
				t.Fatalf("Next = %v, want the source's end with the broker's OFFSET_OUT_OF_RANGE", err)
			}
			c.want(t, err)
			closeErr := src.Close()
			if resume, ok := LostPosition(closeErr); !ok || resume != c.resume {
				t.Fatalf("Close = %v: LostPosition %d, %v; want %d", closeErr, resume, ok, c.resume)
			}
			if len(*reported) != 0 {
				t.Fatalf("reported %v: the worker reports the lost position, nothing else is", *reported)
			}
			broker.SetHandlerByMap(map[string]sarama.MockResponse{
				"MetadataRequest": leaderMetadata(t, broker, broker),
				"OffsetRequest":   logRange(t, c.start, c.end),
				"FetchRequest":    sarama.NewMockWrapper(offsetsFetch(c.resume, c.resume+1)),
			})
			again, err := p.Open(c.resume)
			if err != nil {
				t.Fatal(err)
			}
			defer again.Close()
			if _, ok := again.(*feedSource); !ok {
				t.Fatalf("the next Open = %T, want the batch feed again (no fallback)", again)
			}
			next(t, again, c.resume)
		})
	}
}

// An OFFSET_OUT_OF_RANGE at a position within the log's range (a stale
// leader's answer) is retried like a moved leader: the feed reads on at
// the same position, nothing ends and nothing is reported.
func TestFeedOutOfRangeWithinTheLogIsRetried(t *testing.T) {
	broker := sarama.NewMockBroker(t, 1)
	defer broker.Close()
	e, reported, retries := outOfRangeEngine(t, broker, true)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	p := e.Partition(ctx, "t", 0, nil, nil)
	src := readToFive(t, p)
	defer src.Close()
	broker.SetHandlerByMap(map[string]sarama.MockResponse{
		"MetadataRequest": leaderMetadata(t, broker, broker),
		"OffsetRequest":   logRange(t, 0, 7),
		"FetchRequest":    sarama.NewMockSequence(outOfRangeFetch(), offsetsFetch(5, 7)),
	})
	next(t, src, 5)
	next(t, src, 6)
	if retries.Count() == 0 {
		t.Fatal("no retry counted: the OFFSET_OUT_OF_RANGE answer was never seen")
	}
	if len(*reported) != 0 {
		t.Fatalf("reported %v, want nothing", *reported)
	}
}

// Through sarama's partition consumer (no batch feed): sarama gives up on
// a partition whose fetch answers OFFSET_OUT_OF_RANGE mid-stream. Its
// error is not reported as such: the source ends, and the Open at the
// position after the last message handed out tells the truncation apart,
// as the feed does, instead of restarting at Offsets.Initial.
func TestPartitionConsumerOutOfRangeMidStream(t *testing.T) {
	broker := sarama.NewMockBroker(t, 1)
	defer broker.Close()
	e, reported, _ := outOfRangeEngine(t, broker, false)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	initial := 0
	p := e.Partition(ctx, "t", 0, nil, func(int64, error) (int64, error) {
		initial++
		return 0, errors.New("Offsets.Initial")
	})
	src := readToFive(t, p)
	if _, ok := src.(*consumerSource); !ok {
		t.Fatalf("Open = %T, want sarama's partition consumer", src)
	}
	broker.SetHandlerByMap(map[string]sarama.MockResponse{
		"MetadataRequest": leaderMetadata(t, broker, broker),
		"OffsetRequest":   logRange(t, 0, 2),
		"FetchRequest":    sarama.NewMockWrapper(outOfRangeFetch()),
	})
	if err := sourceEnd(t, src); !errors.Is(err, ErrSourceEnded) {
		t.Fatalf("Next = %v, want ErrSourceEnded", err)
	}
	if err := src.Close(); err != nil {
		t.Fatalf("Close = %v: sarama's consumer stopped, it did not fail", err)
	}
	_, err := p.Open(5)
	var trunc *TruncationError
	if !errors.As(err, &trunc) || trunc.Position != 5 || trunc.LogEnd != 2 {
		t.Fatalf("Open(5) = %v, want a *TruncationError at 5, log end 2", err)
	}
	if initial != 0 {
		t.Fatal("Offsets.Initial was consulted for a position reached by reading")
	}
	for _, r := range *reported {
		if errors.Is(r, sarama.ErrOffsetOutOfRange) {
			t.Fatalf("sarama's error reported as it is (%v): the lost position is reported once, typed", r)
		}
	}
}

// A stored offset out of range when the claim starts (no position reached
// yet) still goes to Offsets.Initial, as upstream does.
func TestStoredOffsetOutOfRangeGoesToInitial(t *testing.T) {
	broker := sarama.NewMockBroker(t, 1)
	defer broker.Close()
	e, _, _ := outOfRangeEngine(t, broker, false)
	broker.SetHandlerByMap(map[string]sarama.MockResponse{
		"MetadataRequest": leaderMetadata(t, broker, broker),
		"OffsetRequest":   logRange(t, 0, 5),
		"FetchRequest":    sarama.NewMockWrapper(outOfRangeFetch()),
	})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var asked []int64
	p := e.Partition(ctx, "t", 0, nil, func(start int64, err error) (int64, error) {
		asked = append(asked, start)
		return 0, errors.New("Offsets.Initial")
	})
	if _, err := p.Open(9); err == nil || err.Error() != "Offsets.Initial" {
		t.Fatalf("Open(9) = %v, want Offsets.Initial's answer", err)
	}
	if len(asked) != 1 || asked[0] != 9 {
		t.Fatalf("Offsets.Initial asked for %v, want [9]", asked)
	}
}

// A feed opened at a stored offset out of range whose first answer is a
// throttle (no partition in it, so nothing said about the offset) has not
// read through it: the OFFSET_OUT_OF_RANGE that follows goes to
// Offsets.Initial (the feed falls back, sarama's open asks it), not to a
// *TruncationError that resumes at the log's end and skips what
// Offsets.Initial (the oldest) would read.
func TestThrottledFirstFetchReadsNothingThrough(t *testing.T) {
	broker := sarama.NewMockBroker(t, 1)
	defer broker.Close()
	e, _, _ := outOfRangeEngine(t, broker, true)
	throttled := &sarama.FetchResponse{Version: fetchVersion(testVersion), ThrottleTime: 5 * time.Millisecond}
	broker.SetHandlerByMap(map[string]sarama.MockResponse{
		"MetadataRequest": leaderMetadata(t, broker, broker),
		"OffsetRequest":   logRange(t, 0, 5),
		"FetchRequest":    sarama.NewMockSequence(throttled, outOfRangeFetch()),
	})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	p := e.Partition(ctx, "t", 0, nil, nil)
	src, err := p.Open(9)
	if err != nil {
		t.Fatal(err)
	}
	err = sourceEnd(t, src)
	closeErr := src.Close()
	if _, lost := LostPosition(err); lost {
		t.Fatalf("Next = %v: the stored offset 9 was never read through, want a fallback to Offsets.Initial", err)
	}
	if !errors.Is(closeErr, sarama.ErrOffsetOutOfRange) {
		t.Fatalf("Close = %v, want the broker's OFFSET_OUT_OF_RANGE", closeErr)
	}
}

// Retention that removes more after a *RetentionError (DeleteRecords, a
// segment deleted meanwhile) leaves the position the reader resumes at,
// the log's start it was told, out of range too: that is retention again,
// resumed at the new start, not a stored offset never read through that
// falls back to sarama's consumer and on to Offsets.Initial (the newest,
// skipping what retention left).
func TestFeedRetentionAgainAtTheResumedStart(t *testing.T) {
	broker := sarama.NewMockBroker(t, 1)
	defer broker.Close()
	e, reported, _ := outOfRangeEngine(t, broker, true)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	p := e.Partition(ctx, "t", 0, nil, func(int64, error) (int64, error) {
		return 0, errors.New("Offsets.Initial")
	})
	src := readToFive(t, p)
	broker.SetHandlerByMap(map[string]sarama.MockResponse{
		"MetadataRequest": leaderMetadata(t, broker, broker),
		"OffsetRequest":   logRange(t, 8, 12),
		"FetchRequest":    sarama.NewMockWrapper(outOfRangeFetch()),
	})
	_ = sourceEnd(t, src)
	if resume, ok := LostPosition(src.Close()); !ok || resume != 8 {
		t.Fatalf("first loss: resume %d, %v; want 8", resume, ok)
	}
	broker.SetHandlerByMap(map[string]sarama.MockResponse{
		"MetadataRequest": leaderMetadata(t, broker, broker),
		"OffsetRequest":   logRange(t, 10, 12),
		"FetchRequest":    sarama.NewMockWrapper(outOfRangeFetch()),
	})
	again, err := p.Open(8)
	if err != nil {
		t.Fatal(err)
	}
	err = sourceEnd(t, again)
	closeErr := again.Close()
	var ret *RetentionError
	if !errors.As(err, &ret) || ret.Position != 8 || ret.LogStart != 10 {
		t.Fatalf("at the resumed start 8, with the log at [10, 12): Next = %v, want a *RetentionError at 8, log start 10", err)
	}
	if resume, ok := LostPosition(closeErr); !ok || resume != 10 {
		t.Fatalf("Close = %v, want a lost position resuming at 10", closeErr)
	}
	if len(*reported) != 0 {
		t.Fatalf("reported %v, want nothing (the worker reports the lost position)", *reported)
	}
}
