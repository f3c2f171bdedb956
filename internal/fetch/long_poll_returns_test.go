package fetch

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/IBM/sarama"
)

// The idle fetcher's next long poll to a broker waits for the partitions
// its last one answered with messages up to their marks: until each is
// queued again, or Consumer.MaxProcessingTime. A partition answered below
// its mark (its next fetch is busy), without messages, or with an error
// is not waited for.
func TestLongPollWaitsForThePartitionsItAnswered(t *testing.T) {
	conf := sarama.NewConfig()
	conf.Consumer.MaxProcessingTime = 300 * time.Millisecond
	msg := []*sarama.ConsumerMessage{{Topic: "t", Offset: 0}}
	want := func(p int32) *fetchWant { return &fetchWant{topic: "t", partition: p} }
	answered := []*fetchWant{want(0), want(1), want(2), want(3), want(4)}
	results := []fetchResult{
		{msgs: msg, next: 1, hwm: 1}, // reached its mark: waited for
		{msgs: msg, next: 1, hwm: 1}, // the same
		{msgs: msg, next: 1, hwm: 5}, // below its mark: busy next
		{next: 0, hwm: 1},            // nothing: long-polls again at once
		{msgs: msg, next: 1, hwm: 1, err: errNoRecordsBelowMark},
	}
	newIdle := func() *roundFetcher {
		f := newRoundFetcher(&env{config: &Config{Config: conf}})
		f.longPoll = true
		return f
	}
	held := func(f *roundFetcher) <-chan time.Duration {
		out := make(chan time.Duration, 1)
		go func() {
			start := time.Now()
			f.holdForReturns(7)
			out <- time.Since(start)
		}()
		return out
	}

	t.Run("both back", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			f := newIdle()
			f.expectReturns(7, answered, results)
			took := held(f)
			time.Sleep(10 * time.Millisecond)
			f.mu.Lock()
			f.returned(7, want(2)) // not waited for: changes nothing
			f.returned(7, want(0))
			f.mu.Unlock()
			synctest.Wait()
			select {
			case d := <-took:
				t.Fatalf("held %v with partition 1 not back", d)
			default:
			}
			time.Sleep(10 * time.Millisecond)
			f.mu.Lock()
			f.returned(7, want(1))
			f.mu.Unlock()
			if d := <-took; d != 20*time.Millisecond {
				t.Fatalf("held %v, want 20ms: until partitions 0 and 1 were back", d)
			}
		})
	})
	t.Run("one never back", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			f := newIdle()
			f.expectReturns(7, answered, results)
			took := held(f)
			f.mu.Lock()
			f.returned(7, want(0))
			f.mu.Unlock()
			if d := <-took; d != conf.Consumer.MaxProcessingTime {
				t.Fatalf("held %v, want Consumer.MaxProcessingTime (%v)", d, conf.Consumer.MaxProcessingTime)
			}
			if d := <-held(f); d != 0 {
				t.Fatalf("the long poll after held %v, want 0: a partition not back in time is not waited for again", d)
			}
		})
	})
	t.Run("busy fetcher", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			f := newIdle()
			f.longPoll = false
			f.expectReturns(7, answered, results)
			if d := <-held(f); d != 0 {
				t.Fatalf("a busy fetcher held %v, want 0", d)
			}
		})
	})
}
