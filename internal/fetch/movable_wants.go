package fetch

import (
	"context"
	"errors"
	"maps"
	"sync"

	"github.com/IBM/sarama"
)

// A fetch follows its partition's leader: each want fetchSized waits for
// is movable, and one whose partition the client names another leader (or
// epoch) for, when a reported move is applied or before its round goes
// out, is cancelled and sent again to the new leader. See
// docs/batch-feed.md, "Leaders and epochs".

// errLeaderMoved is the cause a want is cancelled with when the client
// names another leader (or epoch) for its partition than the one it was
// queued for: its fetch is sent again, to the new leader.
var errLeaderMoved = errors.New("the partition's leader moved")

// maxMovesPerFetch bounds how often one fetch follows a moved leader
// before it returns, so metadata that keeps changing cannot hold it.
const maxMovesPerFetch = 10

// movableWants are a fetcher's wants still waited for, by topic, each
// with the broker it was queued for and the cancel of its context: a want
// cancelled with errLeaderMoved is dropped from its round (see
// takeDistinct) and sent again by its fetchSized. Its zero value is ready.
type movableWants struct {
	mu      sync.Mutex
	byTopic map[string]map[*fetchWant]movableWant
}

type movableWant struct {
	broker int32 // the id of the broker it was queued for
	cancel context.CancelCauseFunc
}

func (m *movableWants) add(w *fetchWant, broker int32, cancel context.CancelCauseFunc) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.byTopic == nil {
		m.byTopic = make(map[string]map[*fetchWant]movableWant)
	}
	if m.byTopic[w.topic] == nil {
		m.byTopic[w.topic] = make(map[*fetchWant]movableWant)
	}
	m.byTopic[w.topic][w] = movableWant{broker, cancel}
}

func (m *movableWants) remove(w *fetchWant) {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.byTopic[w.topic], w)
	if len(m.byTopic[w.topic]) == 0 {
		delete(m.byTopic, w.topic)
	}
}

// cancel cancels w with errLeaderMoved; it reports false for a want that
// is not movable (not waited for by fetchSized).
func (m *movableWants) cancel(w *fetchWant) bool {
	m.mu.Lock()
	mw, ok := m.byTopic[w.topic][w]
	m.mu.Unlock()
	if ok {
		mw.cancel(errLeaderMoved)
	}
	return ok
}

// followMoves sends every want of topic waited for, queued or in flight,
// whose partition the client names another leader or epoch for now, to
// that leader: its fetchSized stops waiting for the old one (a long poll
// there is not waited out) and fetches again.
func (f *roundFetcher) followMoves(topic string) {
	f.wants.mu.Lock()
	wants := maps.Clone(f.wants.byTopic[topic])
	f.wants.mu.Unlock()
	for w, mw := range wants {
		if f.ledElsewhere(w, mw.broker) {
			mw.cancel(errLeaderMoved)
		}
	}
}

// stillLed returns the wants of batch, a round to broker id about to be
// sent, whose partitions the client still names id leader of, at the
// epoch they carry. The others are cancelled (errLeaderMoved): their
// fetchSized sends them to the new leader.
func (f *roundFetcher) stillLed(id int32, batch []*fetchWant) []*fetchWant {
	led := batch[:0:0]
	for _, w := range batch {
		if f.ledElsewhere(w, id) && f.wants.cancel(w) {
			continue
		}
		led = append(led, w)
	}
	return led
}

// ledElsewhere reports whether the client's metadata names another leader
// than broker for w's partition, or another epoch than w carries. A
// partition the client knows no leader of is not: its fetch goes where it
// was queued, and the broker's answer says what to do.
func (f *roundFetcher) ledElsewhere(w *fetchWant, broker int32) bool {
	b, epoch, err := leaderAndEpoch(f.env.client, w.topic, w.partition)
	return err == nil && (b.ID() != broker || epoch != w.epoch)
}

// leaderMovedError reports whether err is a partition error saying the
// broker fetched does not lead the partition at the fetch's epoch.
func leaderMovedError(err error) bool {
	for _, kerr := range []sarama.KError{sarama.ErrNotLeaderForPartition, sarama.ErrFencedLeaderEpoch,
		sarama.ErrUnknownLeaderEpoch, sarama.ErrLeaderNotAvailable} {
		if errors.Is(err, kerr) {
			return true
		}
	}
	return false
}
