package fetch

import (
	"errors"
	"sync/atomic"

	"github.com/IBM/sarama"
)

// consumerSource is a Source read through sarama's partition consumer,
// after a prefix fetched directly, while the partition consumer may still
// be opening: ready is closed once pc or openErr is set.
type consumerSource struct {
	mark    highWaterMark
	reached *readPositions            // told how far the partition was read (nil: not)
	report  func(error)               // pc's errors
	closed  func(error) error         // told how the source ended (see Partition.closed)
	prefix  []*sarama.ConsumerMessage // handed out first
	ready   chan struct{}             // nil once Next took it
	done    chan struct{}             // closed with ready; Close waits on it
	pc      sarama.PartitionConsumer
	openErr error
	msgs    <-chan *sarama.ConsumerMessage // pc's, once Next took ready
	errs    <-chan *sarama.ConsumerError
}

// consumerSource is a Source over pc, open already.
func (p *Partition) consumerSource(pc sarama.PartitionConsumer) *consumerSource {
	s := openedSource(pc, p.mark, p.consumerErrors, p.closed)
	s.reached = p.positions
	return s
}

// consumerErrors reports the errors of the partition's sarama partition
// consumer, but for an offset out of range: sarama stops the partition
// after it, the source ends, and the Open at the position after the last
// message handed out tells a lost position (reported by the reader) from
// a stale answer (read on). See docs/batch-feed.md, "Out of range
// mid-stream".
func (p *Partition) consumerErrors(err error) {
	if errors.Is(err, sarama.ErrOffsetOutOfRange) {
		p.e.env.log.Debug("sarama's partition consumer stopped at an offset out of range", "topic", p.topic,
			"partition", p.partition, "err", err)
		return
	}
	p.e.deps.Report(err)
}

// openedSource is a Source over pc, open already; see consumerSource's
// fields.
func openedSource(pc sarama.PartitionConsumer, mark *atomic.Int64, report func(error), closed func(error) error) *consumerSource {
	s := &consumerSource{mark: highWaterMark{mark}, report: report, closed: closed, ready: make(chan struct{}), pc: pc}
	close(s.ready)
	s.done = s.ready
	return s
}

// openAsync hands prefix out while sarama's partition consumer opens in
// the background after it. Unlike open, the background open does not
// handle an offset out of range: it fails the source, and the next Open
// opens plainly.
func (p *Partition) openAsync(prefix []*sarama.ConsumerMessage) *consumerSource {
	s := p.prefixSource(prefix)
	go func() {
		defer close(s.ready)
		s.pc, s.openErr = p.consumePartition(prefix[len(prefix)-1].Offset + 1)
	}()
	return s
}

// prefixSource hands out prefix, then the messages of the partition
// consumer that is set, or fails to open (openErr), as ready is closed.
func (p *Partition) prefixSource(prefix []*sarama.ConsumerMessage) *consumerSource {
	s := &consumerSource{mark: highWaterMark{p.mark}, reached: p.positions, report: p.consumerErrors, closed: p.closed, prefix: prefix,
		ready: make(chan struct{})}
	s.done = s.ready
	return s
}

// FromPartitionConsumer returns a Source over pc, a partition consumer
// open already: its errors go to report (nil: dropped), its high-water
// mark to mark (nil: nowhere).
func FromPartitionConsumer(pc sarama.PartitionConsumer, mark *atomic.Int64, report func(error)) Source {
	if report == nil {
		report = func(error) {}
	}
	return openedSource(pc, mark, report, func(err error) error { return err })
}

// Next implements Source. It ends the source when the background open
// failed, or when sarama gave up on the partition (it closed the
// messages channel, e.g. an offset out of range).
func (s *consumerSource) Next(wake <-chan struct{}) (*sarama.ConsumerMessage, error) {
	if len(s.prefix) > 0 {
		m := s.prefix[0]
		if s.prefix = s.prefix[1:]; len(s.prefix) == 0 {
			s.prefix = nil // let the first fetch's batch (and its response buffer) go
		}
		s.mark.past(m.Offset)
		s.reached.reach(m.Offset + 1)
		return m, nil
	}
	for {
		var m *sarama.ConsumerMessage
		var open bool
		select {
		case m, open = <-s.msgs:
		default:
			select {
			case <-wake:
				return nil, nil
			case <-s.ready:
				s.ready = nil
				if s.openErr != nil {
					return nil, ErrSourceEnded
				}
				s.msgs, s.errs = s.pc.Messages(), s.pc.Errors()
				s.mark.set(s.pc.HighWaterMarkOffset())
				continue
			case err, ok := <-s.errs:
				if ok && err != nil {
					s.report(err)
				}
				continue
			case m, open = <-s.msgs:
			}
		}
		if !open {
			s.reportQueued()
			return nil, ErrSourceEnded
		}
		s.mark.set(s.pc.HighWaterMarkOffset())
		s.reached.reach(m.Offset + 1)
		return m, nil
	}
}

// reportQueued reports the errors pc queued before it closed its
// messages: sarama sends the error it gives up with (an offset out of
// range, ErrConsumerRetriesExhausted) before it closes them, and Next
// prefers a ready message channel, so a closed one would otherwise end the
// source with that error still queued, for Close's drain to drop.
func (s *consumerSource) reportQueued() {
	for {
		select {
		case err, ok := <-s.errs:
			if !ok {
				s.errs = nil
				return
			}
			if err != nil {
				s.report(err)
			}
		default:
			return
		}
	}
}

// Close implements Source: it waits until the partition consumer is open
// and closes it. Its error is that of a failed background open.
func (s *consumerSource) Close() error {
	<-s.done
	if s.openErr != nil {
		return s.closed(s.openErr)
	}
	closePartitionConsumer(s.pc)
	return nil
}

// closePartitionConsumer closes pc and drains both of its channels at
// once: sarama blocks on a full errors channel before it closes messages.
func closePartitionConsumer(pc sarama.PartitionConsumer) {
	pc.AsyncClose()
	msgs, errs := pc.Messages(), pc.Errors()
	for msgs != nil || errs != nil {
		select {
		case _, ok := <-msgs:
			if !ok {
				msgs = nil
			}
		case _, ok := <-errs:
			if !ok {
				errs = nil
			}
		}
	}
}
