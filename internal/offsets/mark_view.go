package offsets

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
// Partitions outside [0, maxIndexedPartition) (never a real Kafka topic's,
// but InitializePartition takes any number) are kept in a map, so a wild
// partition number costs one entry, not a slice up to it. A topic whose
// last partition is released is retired and forgotten, so topics that come
// and go (pattern subscriptions) leave nothing behind; a lookup that
// finds the remembered topic retired looks it up again.
//
// Writers (set) are serialized by the caller; readers (get) never block.
type markView struct {
	topics sync.Map // topic -> *topicView
	last   atomic.Pointer[topicView]
	others sync.Map // TopicPartition -> *Partition, partitions not indexed
}

// maxIndexedPartition bounds the partitions kept by index: Kafka's own
// limits keep real topics far below it.
const maxIndexedPartition = 1 << 16

// topicView is one topic's tracked partitions, by partition.
type topicView struct {
	topic   string
	parts   atomic.Pointer[[]atomic.Pointer[Partition]]
	retired atomic.Bool // removed from topics: look the topic up again
	live    int         // partitions set (not nil); written by set only
}

// get returns the tracked offsets of tp, or nil.
func (v *markView) get(tp TopicPartition) *Partition {
	if tp.Partition < 0 || tp.Partition >= maxIndexedPartition {
		if o, ok := v.others.Load(tp); ok {
			return o.(*Partition)
		}
		return nil
	}
	tv := v.last.Load()
	if tv == nil || tv.topic != tp.Topic || tv.retired.Load() {
		x, ok := v.topics.Load(tp.Topic)
		if !ok {
			return nil
		}
		tv = x.(*topicView)
		v.last.Store(tv)
	}
	parts := *tv.parts.Load()
	if int(tp.Partition) >= len(parts) {
		return nil
	}
	return parts[tp.Partition].Load()
}

// set makes o (nil: nothing) the tracked offsets of tp. Calls must not run
// concurrently with each other.
func (v *markView) set(tp TopicPartition, o *Partition) {
	if tp.Partition < 0 || tp.Partition >= maxIndexedPartition {
		if o == nil {
			v.others.Delete(tp)
		} else {
			v.others.Store(tp, o)
		}
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
		tv.parts.Store(&[]atomic.Pointer[Partition]{})
		v.topics.Store(tp.Topic, tv)
	}
	parts := *tv.parts.Load()
	p := int(tp.Partition)
	if p >= len(parts) {
		if o == nil {
			return
		}
		grown := make([]atomic.Pointer[Partition], min(max(p+1, 2*len(parts)), maxIndexedPartition))
		for i := range parts {
			grown[i].Store(parts[i].Load())
		}
		tv.parts.Store(&grown)
		parts = grown
	}
	switch was := parts[p].Swap(o); {
	case was == nil && o != nil:
		tv.live++
	case was != nil && o == nil:
		tv.live--
		if tv.live == 0 {
			tv.retired.Store(true)
			v.topics.Delete(tp.Topic)
		}
	}
}
