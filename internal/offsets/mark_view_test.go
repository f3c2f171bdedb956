package offsets

import (
	"fmt"
	"math"
	"sync"
	"testing"
)

func TestMarkViewGetSet(t *testing.T) {
	var v markView
	a, b, c := &Partition{}, &Partition{}, &Partition{}
	if got := v.get(TopicPartition{"t", 0}); got != nil {
		t.Fatalf("empty view: got %p", got)
	}
	v.set(TopicPartition{"t", 3}, a)
	v.set(TopicPartition{"u", 0}, b)
	v.set(TopicPartition{"t", 40}, c) // grows t's slice; 3 stays
	for _, tc := range []struct {
		tp   TopicPartition
		want *Partition
	}{
		{TopicPartition{"t", 3}, a},
		{TopicPartition{"u", 0}, b},
		{TopicPartition{"t", 40}, c},
		{TopicPartition{"t", 0}, nil},
		{TopicPartition{"t", 41}, nil},
		{TopicPartition{"t", 1000}, nil},
		{TopicPartition{"t", -1}, nil},
		{TopicPartition{"v", 3}, nil},
		{TopicPartition{"u", 0}, b}, // after a miss on another topic
		{TopicPartition{"t", 3}, a},
	} {
		if got := v.get(tc.tp); got != tc.want {
			t.Errorf("get(%v) = %p, want %p", tc.tp, got, tc.want)
		}
	}
	v.set(TopicPartition{"t", 3}, nil)
	v.set(TopicPartition{"t", 5000}, nil) // removing what is not there adds nothing
	v.set(TopicPartition{"w", 1}, nil)
	if got := v.get(TopicPartition{"t", 3}); got != nil {
		t.Errorf("after removal: got %p", got)
	}
	if got := v.get(TopicPartition{"t", 40}); got != c {
		t.Errorf("a removal touched another partition: got %p, want %p", got, c)
	}
	if _, ok := v.topics.Load("w"); ok {
		t.Error("removing from an unknown topic created it")
	}
	if n := len(*mustTopic(t, &v, "t").parts.Load()); n > 80 {
		t.Errorf("removing partition 5000 grew the slice to %d", n)
	}
}

// TestMarkViewWildPartitions: a partition number far out of any real
// topic's range (InitializePartition takes any) costs one entry, and a
// negative one is found like any other.
func TestMarkViewWildPartitions(t *testing.T) {
	var v markView
	huge, neg, low := &Partition{}, &Partition{}, &Partition{}
	v.set(TopicPartition{"t", 1}, low)
	v.set(TopicPartition{"t", math.MaxInt32}, huge)
	v.set(TopicPartition{"t", -1}, neg)
	if n := len(*mustTopic(t, &v, "t").parts.Load()); n > 2 {
		t.Errorf("partition MaxInt32 grew the slice to %d entries", n)
	}
	for tp, want := range map[TopicPartition]*Partition{
		{"t", 1}: low, {"t", math.MaxInt32}: huge, {"t", -1}: neg, {"t", math.MaxInt32 - 1}: nil,
	} {
		if got := v.get(tp); got != want {
			t.Errorf("get(%v) = %p, want %p", tp, got, want)
		}
	}
	v.set(TopicPartition{"t", math.MaxInt32}, nil)
	v.set(TopicPartition{"t", -1}, nil)
	if v.get(TopicPartition{"t", math.MaxInt32}) != nil || v.get(TopicPartition{"t", -1}) != nil {
		t.Error("wild partitions still found after their release")
	}
	if n := testing.AllocsPerRun(100, func() { v.get(TopicPartition{"t", math.MaxInt32}) }); n != 0 {
		t.Errorf("a lookup allocates %v times", n)
	}
}

// TestMarkViewForgetsTopics: a topic whose partitions are all released is
// forgotten, and claimed again it is found, although the view remembered
// the retired topic as the last one looked up.
func TestMarkViewForgetsTopics(t *testing.T) {
	var v markView
	a, b := &Partition{}, &Partition{}
	for i := 0; i < 1000; i++ {
		topic := fmt.Sprintf("gone-%d", i)
		v.set(TopicPartition{topic, 7}, a)
		v.set(TopicPartition{topic, 7}, nil)
	}
	n := 0
	v.topics.Range(func(any, any) bool { n++; return true })
	if n != 0 {
		t.Errorf("%d released topics still held", n)
	}
	v.set(TopicPartition{"t", 0}, a)
	v.set(TopicPartition{"t", 3}, a)
	if v.get(TopicPartition{"t", 0}) != a { // remembered as the last topic
		t.Fatal("t/0 not found")
	}
	v.set(TopicPartition{"t", 0}, nil)
	if v.get(TopicPartition{"t", 3}) != a {
		t.Fatal("releasing t/0 lost t/3")
	}
	v.set(TopicPartition{"t", 3}, nil) // t retired
	if v.get(TopicPartition{"t", 3}) != nil {
		t.Fatal("t/3 found after its release")
	}
	v.set(TopicPartition{"t", 3}, b) // t again, a new view of it
	if got := v.get(TopicPartition{"t", 3}); got != b {
		t.Fatalf("t/3 claimed again: got %p, want %p", got, b)
	}
}

func mustTopic(t *testing.T, v *markView, topic string) *topicView {
	t.Helper()
	x, ok := v.topics.Load(topic)
	if !ok {
		t.Fatalf("topic %s missing", topic)
	}
	return x.(*topicView)
}

// TestMarkViewConcurrentReaders: lookups from many goroutines, on several
// topics, while one writer claims and releases partitions (run with -race):
// a reader sees either nothing or what was set for that very partition,
// and a partition set before the readers start is always found.
func TestMarkViewConcurrentReaders(t *testing.T) {
	var v markView
	owned := make(map[TopicPartition]*Partition)
	for _, topic := range []string{"a", "b", "c"} {
		for p := int32(0); p < 64; p++ {
			owned[TopicPartition{topic, p}] = &Partition{}
		}
	}
	stable := TopicPartition{"a", 0}
	v.set(stable, owned[stable])
	var wg sync.WaitGroup
	stop := make(chan struct{})
	errs := make(chan error, 8)
	for r := 0; r < 4; r++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				tp := TopicPartition{[]string{"a", "b", "c"}[i%3], int32(i % 64)}
				if got := v.get(tp); got != nil && got != owned[tp] {
					errs <- fmt.Errorf("get(%v) returned another partition's offsets", tp)
					return
				}
				if v.get(stable) != owned[stable] {
					errs <- fmt.Errorf("lost %v while others changed", stable)
					return
				}
			}
		}()
	}
	for round := 0; round < 200; round++ {
		for tp, o := range owned {
			if tp == stable {
				continue
			}
			if round%2 == 0 {
				v.set(tp, o)
			} else {
				v.set(tp, nil)
			}
		}
	}
	close(stop)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}
