package worker

import (
	"math/rand"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/IBM/sarama"
)

type stressOvertaker struct {
	below atomic.Int64
	wake  chan struct{}
	mu    sync.Mutex
}

func (s *stressOvertaker) holdCommits() func() { return func() {} }
func (s *stressOvertaker) takenBack(ms []*sarama.ConsumerMessage, _ int64) {
	lowest := ms[0].Offset
	for {
		old := s.below.Load()
		if old >= 0 && old <= lowest || s.below.CompareAndSwap(old, lowest) {
			break
		}
	}
	s.mu.Lock()
	select {
	case <-s.wake:
	default:
		close(s.wake)
	}
	s.mu.Unlock()
}
func (s *stressOvertaker) interrupt() <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.wake
}
func (s *stressOvertaker) rearm() {
	s.mu.Lock()
	select {
	case <-s.wake:
		s.wake = make(chan struct{})
	default:
	}
	s.mu.Unlock()
}

// Every partition's worker sends 0..n-1, takes back its own at random and
// restarts at the lowest taken back, and restarts below what it is told it
// was overtaken at; the application reads at random speed. Every offset
// must reach the application, and a partition's offsets never go
// backwards but after a restart of its own.
func TestOutboxStressNoLoss(t *testing.T) {
	const parts, n = 4, 3000
	o := NewOutbox(4)
	var got [parts]map[int64]bool
	var restarts [parts]atomic.Int64
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for i := range got {
		got[i] = map[int64]bool{}
	}
	var backwardsUnexplained atomic.Int64
	var lastSeen [parts]int64
	var lastRestarts [parts]int64
	for i := range lastSeen {
		lastSeen[i] = -1
	}
	readerDone := make(chan struct{})
	go func() {
		defer close(readerDone)
		r := rand.New(rand.NewSource(1))
		for {
			var pre [parts]int64
			for i := range pre {
				pre[i] = restarts[i].Load()
			}
			select {
			case m := <-o.C():
				p := m.Partition
				got[p][m.Offset] = true
				if m.Offset <= lastSeen[p] && restarts[p].Load() == lastRestarts[p] {
					backwardsUnexplained.Add(1)
					t.Logf("partition %d: %d after %d, restarts %d", p, m.Offset, lastSeen[p], lastRestarts[p])
				}
				lastSeen[p], lastRestarts[p] = m.Offset, pre[p]
				if r.Intn(50) == 0 {
					time.Sleep(time.Microsecond * time.Duration(r.Intn(50)))
				}
			case <-stop:
				return
			}
		}
	}()
	for i := 0; i < parts; i++ {
		ov := &stressOvertaker{wake: make(chan struct{})}
		ov.below.Store(-1)
		part := o.Register(TopicPartition{Topic: "t", Partition: int32(i)}, ov)
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			r := rand.New(rand.NewSource(int64(i) + 7))
			next := int64(0)
			restart := func(to int64) {
				if to >= 0 && to < next {
					restarts[i].Add(1)
					next = to
				}
			}
			deadline := time.Now().Add(20 * time.Second)
			for time.Now().Before(deadline) {
				if b := ov.below.Swap(-1); b >= 0 {
					ov.rearm()
					ms := part.TakeBack()
					lo := b
					for _, m := range ms {
						lo = min(lo, m.Offset)
					}
					restart(lo)
					continue
				}
				if next >= n {
					if len(o.C()) == 0 {
						return
					}
					time.Sleep(time.Millisecond)
					continue
				}
				if r.Intn(40) == 0 {
					ms := part.TakeBack()
					if len(ms) > 0 {
						restart(ms[0].Offset)
					}
					continue
				}
				m := &sarama.ConsumerMessage{Topic: "t", Partition: int32(i), Offset: next}
				if part.Send(ov.interrupt(), m) {
					next++
				}
			}
			t.Errorf("partition %d: not done, next %d", i, next)
		}(i)
	}
	wg.Wait()
	time.Sleep(50 * time.Millisecond)
	close(stop)
	<-readerDone
	for i := range got {
		for off := int64(0); off < n; off++ {
			if !got[i][off] {
				t.Errorf("partition %d: offset %d never reached the application", i, off)
				break
			}
		}
	}
	if b := backwardsUnexplained.Load(); b > 0 {
		t.Errorf("%d times a partition went backwards with no restart", b)
	}
	t.Logf("orphans %d restarts %v %v %v %v", o.orphans, restarts[0].Load(), restarts[1].Load(), restarts[2].Load(), restarts[3].Load())
}
