package worker

import (
	"testing"
	"time"

	"github.com/IBM/sarama"
)

// raceSource is a Source whose Next returns a message although a message
// was posted to the inbox while it waited: the batch feed's (or a
// just-opened partition consumer's) select may take a ready batch over a
// ready wake.
type raceSource struct {
	post  func()
	calls int
}

func (s *raceSource) Next(wake <-chan struct{}) (*sarama.ConsumerMessage, error) {
	s.calls++
	if s.calls == 1 {
		s.post()
		<-wake // the seek is posted: wake is ready, and so is the batch
		return &sarama.ConsumerMessage{Topic: "t", Partition: 0, Offset: 5}, nil
	}
	<-wake
	return nil, nil
}

func (s *raceSource) Close() error { return nil }

// TestIntegrationNoHandOverAfterPostedMessage: a fetched message returned
// while a seek was posted goes out only after the seek is taken (here the
// seek ends pump, so it does not go out at all).
func TestIntegrationNoHandOverAfterPostedMessage(t *testing.T) {
	f := newPumpFixture(t, 0) // Messages(): unbuffered, the application reading
	got := make(chan *sarama.ConsumerMessage, 8)
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		for {
			select {
			case m := <-f.out:
				got <- m
			case <-stop:
				return
			}
		}
	}()
	time.Sleep(50 * time.Millisecond) // the reader waits on the channel
	src := &raceSource{post: func() { f.w.inbox.SeekTo(0) }}
	r := await(t, f.runFrom(src, 5))
	select {
	case m := <-got:
		t.Errorf("offset %d handed over although a seek was posted before it was taken (pump = %+v)", m.Offset, r)
	case <-time.After(100 * time.Millisecond):
	}
	if r.ended || r.e != Seek || r.resume != 0 {
		t.Fatalf("pump = %+v, want the seek to 0", r)
	}
}
