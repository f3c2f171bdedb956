package consumergroup

import (
	"sync"
	"sync/atomic"
)

// userPause is the application's pause of one claimed partition
// (HandlerGroup.Pause and PauseAll). It belongs to the claim: a claim that
// starts later is not paused, as under sarama. The worker holds the next
// message back while it is set, whichever path fetched it (the group's
// batch fetches or sarama's partition consumer), so nothing fetched after
// the pause reaches the handler before the resume; fetching stops with it,
// since a batch feed fetches at most one batch ahead, and sarama's consumer
// is paused as well.
type userPause struct {
	paused  atomic.Bool // the hot path's check
	mu      sync.Mutex
	resumed chan struct{} // closed by resume; nil while not paused
}

// set pauses (true) or resumes (false).
func (p *userPause) set(paused bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	switch {
	case paused && p.resumed == nil:
		p.resumed = make(chan struct{})
	case !paused && p.resumed != nil:
		close(p.resumed)
		p.resumed = nil
	}
	p.paused.Store(paused)
}

// held returns a channel closed at the resume while the partition is
// paused, and nil otherwise.
func (p *userPause) held() <-chan struct{} {
	if !p.paused.Load() {
		return nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.resumed
}

// pausePartitions pauses or resumes the listed partitions this instance
// consumes now (others are ignored, as sarama ignores them), and sarama's
// partition consumers of them.
func (cg *ConsumerGroup) pausePartitions(partitions map[string][]int32, paused bool) {
	for topic, ps := range partitions {
		for _, p := range ps {
			if o := cg.offsetManager.lookup(topicPartition{topic, p}); o != nil {
				o.pause.set(paused)
			}
		}
	}
	if paused {
		cg.consumer.Pause(partitions)
	} else {
		cg.consumer.Resume(partitions)
	}
}

// pauseAll pauses or resumes every partition this instance consumes now,
// and sarama's partition consumers.
func (cg *ConsumerGroup) pauseAll(paused bool) {
	for _, o := range cg.offsetManager.snapshot() {
		o.pause.set(paused)
	}
	if paused {
		cg.consumer.PauseAll()
	} else {
		cg.consumer.ResumeAll()
	}
}
