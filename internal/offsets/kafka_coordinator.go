package offsets

import (
	"errors"
	"fmt"
	"time"

	"github.com/IBM/sarama"
)

// coordinatorLookup is a lookup of the group's coordinator, shared by
// every caller that needs it while it runs.
type coordinatorLookup struct {
	done       chan struct{} // closed when the lookup ended, broker and err then set
	refreshing bool          // the round under way asks Kafka, cache or not
	again      bool          // a refresh was asked for during a round that reads the cache
	broker     *sarama.Broker
	err        error
}

// coordinator returns the group's coordinator: the one sarama has cached,
// or one it looks up (client.Coordinator: FindCoordinator with
// Metadata.Retry.Max retries, 2 s apart while the coordinator is loading,
// up to Net.ReadTimeout each). It waits for the lookup until deadline (none
// when zero), returning an error wrapping errKafkaCommitDeadline then, and
// until closing is closed (ErrGroupClosing); the lookup goes on, and its
// result stays cached for the next attempt. One lookup runs at a time.
func (s *KafkaOffsets) coordinator(deadline time.Time) (*sarama.Broker, error) {
	l := s.startLookup(false)
	expired, stop := deadlineTimer(deadline)
	defer stop()
	select {
	case <-l.done:
		return l.broker, l.err
	case <-expired:
		return nil, fmt.Errorf("looking the group's coordinator up outlasted the commit's deadline: %w", errKafkaCommitDeadline)
	case <-s.closing:
		return nil, ErrGroupClosing
	}
}

// startLookup returns the coordinator lookup in flight, or starts one.
// refresh asks Kafka even if sarama has a coordinator cached; asked for
// while a lookup that reads the cache runs, it makes that lookup ask Kafka
// once more before it ends.
func (s *KafkaOffsets) startLookup(refresh bool) *coordinatorLookup {
	s.lookupMu.Lock()
	defer s.lookupMu.Unlock()
	if l := s.lookup; l != nil {
		if refresh && !l.refreshing {
			l.again = true
		}
		return l
	}
	l := &coordinatorLookup{done: make(chan struct{}), refreshing: refresh}
	s.lookup = l
	go s.runLookup(l)
	return l
}

// runLookup makes lookup l, in rounds (see startLookup), and ends it.
func (s *KafkaOffsets) runLookup(l *coordinatorLookup) {
	s.lookupMu.Lock()
	for {
		refresh := l.refreshing
		s.lookupMu.Unlock()
		var broker *sarama.Broker
		var err error
		if refresh {
			err = s.client.RefreshCoordinator(s.group)
		}
		if err == nil {
			broker, err = s.client.Coordinator(s.group)
		}
		s.lookupMu.Lock()
		if !l.again {
			l.broker, l.err = broker, err
			s.lookup = nil
			s.lookupMu.Unlock()
			close(l.done)
			return
		}
		l.again, l.refreshing = false, true
	}
}

// refreshIfMoved starts a lookup of the group's coordinator after a
// request failed with err in a way that says it may have moved:
// NOT_COORDINATOR, COORDINATOR_NOT_AVAILABLE, or no answer at all (a broken
// connection, a broker gone), but not ErrGroupClosing nor a write the
// commit connection's gate refused past a deadline. A broken connection is
// opened again by whoever uses it next (sarama for the client's, the next
// commit for the commit connection); only a move needs the lookup. It does
// not wait for it: the next request does (coordinator).
func (s *KafkaOffsets) refreshIfMoved(err error) {
	var kerr sarama.KError
	if err == nil || errors.Is(err, ErrGroupClosing) || errors.Is(err, errKafkaCommitDeadline) || (errors.As(err, &kerr) &&
		kerr != sarama.ErrNotCoordinatorForConsumer && kerr != sarama.ErrConsumerCoordinatorNotAvailable) {
		return
	}
	s.startLookup(true)
}
