package fetch

import "time"

// While a rebalance's first fetches are out to a broker, the idle
// fetcher holds its long polls to it back (each for Consumer.MaxWaitTime
// at most), so that the busy rounds carrying them go over the own connection
// rather than the client's, behind no long poll, and are decoded here
// rather than by sarama. The partitions held back are at their log end.
// See docs/batch-feed.md, "Connections".

// firstFetchStarted counts a first fetch to broker id as outstanding.
func (o *ownConns) firstFetchStarted(id int32) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.firsts == nil {
		o.firsts = make(map[int32]*outstanding)
	}
	f := o.firsts[id]
	if f == nil {
		f = &outstanding{done: make(chan struct{})}
		o.firsts[id] = f
	}
	f.n++
}

// firstFetchEnded ends what firstFetchStarted counted.
func (o *ownConns) firstFetchEnded(id int32) {
	o.mu.Lock()
	defer o.mu.Unlock()
	f := o.firsts[id]
	if f == nil {
		return
	}
	if f.n--; f.n == 0 {
		close(f.done)
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

// outstanding counts the first fetches out to one broker.
type outstanding struct {
	n    int
	done chan struct{} // closed when n drops to 0
}

// holdLongPoll waits, in the idle fetcher, until no first fetch to broker
// id is outstanding, for at most Consumer.MaxWaitTime. A round of starved
// wants (records below their marks, see answer) is not held, nor a runner
// with no round left.
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
	done := f.own.firstFetchesDone(id)
	if done == nil {
		return
	}
	t := time.NewTimer(f.env.config.Consumer.MaxWaitTime)
	defer t.Stop()
	select {
	case <-done:
	case <-t.C:
	case <-f.closing:
	}
}
