package consumergroup

import (
	"sync"
	"sync/atomic"
)

// markView finds the tracked offsets of a partition for every mark, without
// a lock: a mark is the per-message path of every application (CommitUpto,
// MarkMessage), and on the Messages() path one goroutine makes all of them.
//
// Each topic has a slice of pointers indexed by partition, and the topic
// seen last is remembered, so a lookup is usually a string comparison (the
// topic strings of one partition consumer's messages are one string, which
// compares by pointer) and an index. A claim or a release changes one
// pointer; a topic's slice is copied only when a higher partition than it
// holds is claimed (at 4,096 partitions a copy of the whole map at every
// claim came to half a gigabyte of garbage while claiming).
//
// Writers (set) are serialized by the caller; readers (get) never block.
type markView struct {
	topics sync.Map // topic -> *topicView
	last   atomic.Pointer[topicView]
}

// topicView is one topic's tracked partitions, by partition.
type topicView struct {
	topic string
	parts atomic.Pointer[[]atomic.Pointer[ownedOffsets]]
}

// get returns the tracked offsets of tp, or nil.
func (v *markView) get(tp topicPartition) *ownedOffsets {
	tv := v.last.Load()
	if tv == nil || tv.topic != tp.Topic {
		x, ok := v.topics.Load(tp.Topic)
		if !ok {
			return nil
		}
		tv = x.(*topicView)
		v.last.Store(tv)
	}
	parts := tv.parts.Load()
	if tp.Partition < 0 || int(tp.Partition) >= len(*parts) {
		return nil
	}
	return (*parts)[tp.Partition].Load()
}

// set makes o (nil: nothing) the tracked offsets of tp. Calls must not run
// concurrently with each other.
func (v *markView) set(tp topicPartition, o *ownedOffsets) {
	if tp.Partition < 0 {
		return
	}
	var tv *topicView
	if x, ok := v.topics.Load(tp.Topic); ok {
		tv = x.(*topicView)
	} else {
		if o == nil {
			return
		}
		tv = &topicView{topic: tp.Topic}
		empty := []atomic.Pointer[ownedOffsets]{}
		tv.parts.Store(&empty)
		v.topics.Store(tp.Topic, tv)
	}
	parts := tv.parts.Load()
	if int(tp.Partition) >= len(*parts) {
		if o == nil {
			return
		}
		grown := make([]atomic.Pointer[ownedOffsets], max(int(tp.Partition)+1, 2*len(*parts)))
		for i := range *parts {
			grown[i].Store((*parts)[i].Load())
		}
		grown[tp.Partition].Store(o)
		tv.parts.Store(&grown)
		return
	}
	(*parts)[tp.Partition].Store(o)
}
