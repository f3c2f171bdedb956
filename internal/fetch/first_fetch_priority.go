package fetch

import (
	"sync"
	"time"
)

// While a rebalance's first fetches are out to a broker, or expected
// (partitions still being claimed, their offsets read), the idle fetcher
// holds its long polls to it back (each for Consumer.MaxWaitTime at most),
// so that the busy rounds carrying them go over the own connection rather
// than the client's, behind no long poll, and are decoded here rather than
// by sarama. The partitions held back are at their log end. See
// docs/batch-feed.md, "Connections".

// expectedOpenFor bounds how long a partition expected to open holds long
// polls back, and how long expectations hold any one long poll: a claim
// that waits for another instance (a slow drain, a release that does not
// come) must not hold them for long, nor must workers started one after
// another.
const expectedOpenFor = time.Second

// ExpectOpen says a partition of the group is about to open: its claim or
// its offset read is under way, and its first fetch comes next. Until
// opened is called, or expectedOpenFor has passed, the idle fetcher holds
// its long polls back as it does while a first fetch is out, to every
// broker (the partition's leader is not looked up): otherwise the first
// long poll sent between two claim batches of a rebalance holds the own
// connection, and the next batch's first fetches go over the client's.
// A batch feed opened meanwhile holds them on from its Open until its
// first fetch is answered (feedSource). opened may be called more than
// once. On a nil Engine (a group built without one, in tests) it does
// nothing.
func (e *Engine) ExpectOpen() (opened func()) {
	if e == nil {
		return func() {}
	}
	return e.busy.own.expectOpen(expectedOpenFor)
}

// expectOpen counts a partition expected to open until the func it
// returns is called, or for at most d.
func (o *ownConns) expectOpen(d time.Duration) (opened func()) {
	o.mu.Lock()
	f := o.expected.start()
	o.expected = f
	o.mu.Unlock()
	var once sync.Once
	end := func() {
		once.Do(func() {
			o.mu.Lock()
			defer o.mu.Unlock()
			if f.end() && o.expected == f {
				o.expected = nil
			}
		})
	}
	t := time.AfterFunc(d, end)
	return func() {
		t.Stop()
		end()
	}
}

// opensExpected returns a channel closed once no partition is expected to
// open, nil if none is now.
func (o *ownConns) opensExpected() <-chan struct{} {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.expected != nil {
		return o.expected.done
	}
	return nil
}

// firstFetchStarted counts a first fetch to broker id as outstanding.
func (o *ownConns) firstFetchStarted(id int32) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.firsts == nil {
		o.firsts = make(map[int32]*outstanding)
	}
	o.firsts[id] = o.firsts[id].start()
}

// firstFetchEnded ends what firstFetchStarted counted.
func (o *ownConns) firstFetchEnded(id int32) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if f := o.firsts[id]; f != nil && f.end() {
		delete(o.firsts, id)
	}
}

// firstFetchesDone returns a channel closed once no first fetch to broker
// id is outstanding, nil if none is now.
func (o *ownConns) firstFetchesDone(id int32) <-chan struct{} {
	o.mu.Lock()
	defer o.mu.Unlock()
	if f := o.firsts[id]; f != nil {
		return f.done
	}
	return nil
}

// outstanding counts what holds long polls back: the first fetches out to
// one broker, or the partitions expected to open. ownConns.mu guards it.
type outstanding struct {
	n    int
	done chan struct{} // closed when n drops to 0
}

// start counts one more on o, or on a new count when o is nil or over,
// and returns the count it counted on.
func (o *outstanding) start() *outstanding {
	if o == nil || o.n == 0 {
		o = &outstanding{done: make(chan struct{})}
	}
	o.n++
	return o
}

// end counts one fewer, and reports whether none is left: done is closed
// then, and the count is over.
func (o *outstanding) end() (over bool) {
	if o.n--; o.n == 0 {
		close(o.done)
		return true
	}
	return false
}

// holdLongPoll waits, in the idle fetcher, until no first fetch to broker
// id is outstanding, for at most Consumer.MaxWaitTime, and until no
// partition is expected to open, for at most expectedOpenFor of that:
// workers started one after another keep some partition expected all the
// time, and must not hold each long poll for MaxWaitTime. A round of
// starved wants (records below their marks, see answer) is not held, nor
// a runner with no round left.
func (f *roundFetcher) holdLongPoll(id int32) {
	if !f.longPoll || f.own == nil {
		return
	}
	f.mu.Lock()
	starved, none := len(f.starved[id]) > 0, len(f.pending[id]) == 0
	f.mu.Unlock()
	if starved || none { // records wait below a mark, or no round is left
		return
	}
	var bound *time.Timer
	var expectBound <-chan time.Time // fires expectedOpenFor into the hold by expectations
	expectations := true             // expectations still hold this long poll
	for {
		firsts := f.own.firstFetchesDone(id)
		var opens <-chan struct{}
		if expectations {
			opens = f.own.opensExpected()
		}
		if firsts == nil && opens == nil {
			return
		}
		if bound == nil {
			bound = time.NewTimer(f.env.config.Consumer.MaxWaitTime)
			defer bound.Stop()
		}
		if opens != nil && expectBound == nil {
			t := time.NewTimer(expectedOpenFor)
			defer t.Stop()
			expectBound = t.C
		}
		select { // a nil channel never fires
		case <-firsts:
		case <-opens:
		case <-expectBound:
			expectations = false
		case <-bound.C:
			return
		case <-f.closing:
			return
		}
	}
}
