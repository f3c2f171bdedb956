package fetch

import (
	"context"
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
	newIdle := func() *roundFetcher { return idleFetcher(conf.Consumer.MaxProcessingTime) }
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
			f.returned(want(2)) // not waited for: changes nothing
			f.returned(want(0))
			f.mu.Unlock()
			synctest.Wait()
			select {
			case d := <-took:
				t.Fatalf("held %v with partition 1 not back", d)
			default:
			}
			time.Sleep(10 * time.Millisecond)
			f.mu.Lock()
			f.returned(want(1))
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
			f.returned(want(0))
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

// A long poll answers t/0 with a message up to its mark (so the next long
// poll waits for t/0) and leaves t/1, with records below its mark, starved
// by the response's byte limit. t/1's next round holds records that wait:
// it must not be held for t/0's return (Consumer.MaxProcessingTime), as
// holdLongPoll does not hold starved rounds.
func TestStarvedLongPollRoundNotHeldForReturns(t *testing.T) {
	first := &sarama.FetchResponse{Version: fetchVersion(sarama.V2_8_0_0)}
	first.AddRecordBatch("t", 0, nil, sarama.StringEncoder("m"), 0, 0, false)
	first.GetBlock("t", 0).HighWaterMarkOffset = 1 // reached its mark
	first.AddError("t", 1, sarama.ErrNoError)
	first.GetBlock("t", 1).HighWaterMarkOffset = 5 // starved below its mark
	f, _ := starvedFetcher(t, first, starvedResponse([]int32{1}, nil))
	f.env.config.Consumer.MaxProcessingTime = 2 * time.Second
	f.longPoll = true
	defer f.closeConns()
	w0, w1 := queueBothPartitions(t, f)
	go f.run(1)
	// t/0's reader is slow: its next want does not come back.
	if d := starvedAnsweredAfter(t, w0, w1); d > time.Second {
		t.Errorf("starved t/1, records below its mark, answered %v after the round that starved it: held for t/0's return", d)
	}
}

// The head of the idle fetcher's round loop after a long poll that fed
// t/0 up to its mark, nothing else pending: a first fetch out to the
// broker must still hold the long poll that t/0's return sends, as it
// would once t/0's enqueue started a new round loop. With holdLongPoll
// before holdForReturns, it did not.
func TestReturnedLongPollHeldBehindFirstFetches(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		conf := sarama.NewConfig()
		conf.Consumer.MaxWaitTime = time.Second
		conf.Consumer.MaxProcessingTime = time.Second
		busy, idle := newFetchers(&env{config: &Config{Config: conf}})
		msg := []*sarama.ConsumerMessage{{Topic: "t", Offset: 0}}
		w0 := &fetchWant{topic: "t", partition: 0}
		idle.expectReturns(1, []*fetchWant{w0}, []fetchResult{{msgs: msg, next: 1, hwm: 1}})
		busy.own.firstFetchStarted(1) // a rebalance's first fetch to the broker
		defer busy.own.firstFetchEnded(1)
		sent := make(chan struct{})
		go func() {
			idle.holdNextRound(1)
			close(sent) // run takes its next round now
		}()
		time.Sleep(time.Millisecond)
		idle.mu.Lock()
		idle.pending[1] = append(idle.pending[1], &fetchWant{topic: "t", partition: 0, offset: 1})
		idle.returned(w0) // t/0's next long poll, back at once
		idle.mu.Unlock()
		synctest.Wait()
		select {
		case <-sent:
			t.Fatal("t/0's long poll went out while a first fetch was out to the broker")
		default:
		}
		<-sent
	})
}

// A feed stopped (seek, pause, revoke) while its long poll is in flight
// ends at once: its run's deferred notBackSoon finds nothing to stop. The
// round then answers its cancelled want with a message up to the mark,
// and expectReturns registers the partition: nobody will ever queue it
// again, so the broker's next long poll is held the whole
// Consumer.MaxProcessingTime.
func TestLongPollNotHeldForAStoppedFeed(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := idleFetcher(time.Second)
		ctx, cancel := context.WithCancel(context.Background())
		w := &fetchWant{ctx: ctx, topic: "t", partition: 0, done: make(chan fetchResult, 1)}
		cancel()              // the feed stopped
		f.notBackSoon("t", 0) // its run's defer, before the answer
		answerAtMark(f, 7, w)
		if d := holdTime(f, 7); d != 0 {
			t.Fatalf("held %v for a partition whose feed had ended", d)
		}
	})
}

// followMoves cancels an in-flight want whose epoch changed at the same
// leader: fetchFrom re-queues the partition to the same broker at once,
// while the old round is still out. That round answers the old want up to
// its mark, and expectReturns waits for a partition already pending in the
// very round it holds.
func TestLongPollNotHeldForAWantQueuedAgainBeforeItsAnswer(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := idleFetcher(time.Second)
		ctx, cancel := context.WithCancel(context.Background())
		old := &fetchWant{ctx: ctx, topic: "t", partition: 0, epoch: 1, done: make(chan fetchResult, 1)}
		cancel() // errLeaderMoved: epoch 2 at the same broker
		requeued := &fetchWant{ctx: context.Background(), topic: "t", partition: 0, epoch: 2, done: make(chan fetchResult, 1)}
		f.mu.Lock()
		f.pending[7] = append(f.pending[7], requeued)
		f.returned(requeued)
		f.mu.Unlock()
		answerAtMark(f, 7, old)
		if d := holdTime(f, 7); d != 0 {
			t.Fatalf("held %v for t/0, whose want is already pending in the held round", d)
		}
	})
}

// t/0's leader moved from broker 7 to 8 after broker 7's long poll fed it
// up to its mark: its next want goes to 8, and 7's next long poll waits
// for it the whole Consumer.MaxProcessingTime.
func TestLongPollNotHeldForAPartitionBackAtAnotherBroker(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := idleFetcher(time.Second)
		answerAtMark(f, 7, &fetchWant{ctx: context.Background(), topic: "t", partition: 0, done: make(chan fetchResult, 1)})
		f.mu.Lock()
		f.returned(&fetchWant{topic: "t", partition: 0, offset: 1})
		f.mu.Unlock()
		if d := holdTime(f, 7); d != 0 {
			t.Fatalf("broker 7 held %v for t/0, back at broker 8", d)
		}
	})
}

// idleFetcher is an idle (long-poll) fetcher with no client, and a
// Consumer.MaxProcessingTime of maxProcessing.
func idleFetcher(maxProcessing time.Duration) *roundFetcher {
	conf := sarama.NewConfig()
	conf.Consumer.MaxProcessingTime = maxProcessing
	f := newRoundFetcher(&env{config: &Config{Config: conf}})
	f.longPoll = true
	return f
}

// answerAtMark answers w, one want of a long poll to broker id, with its
// message at offset 0, up to its high-water mark (1).
func answerAtMark(f *roundFetcher, id int32, w *fetchWant) {
	msg := []*sarama.ConsumerMessage{{Topic: w.topic, Partition: w.partition, Offset: 0}}
	f.answer(id, []*fetchWant{w}, []fetchResult{{msgs: msg, next: 1, hwm: 1}}, false)
}

// holdTime returns how long f held its next long poll to broker id.
func holdTime(f *roundFetcher, id int32) time.Duration {
	start := time.Now()
	f.holdForReturns(id)
	return time.Since(start)
}
