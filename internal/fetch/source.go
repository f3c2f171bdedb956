package fetch

import (
	"context"
	"errors"
	"sync/atomic"

	"github.com/IBM/sarama"
)

// Source is one partition's messages from one offset on, read through
// the batch feed or through sarama's partition consumer; the reader does
// not need to know which.
type Source interface {
	// Next returns the partition's next message, waiting for it. It
	// returns nil, nil early when wake is ready, and ErrSourceEnded once
	// the source ended on its own: read again from the offset after the
	// last message it returned, unless the error also says the position
	// was lost (LostPosition: the log was truncated below it, or
	// retention removed it).
	Next(wake <-chan struct{}) (*sarama.ConsumerMessage, error)
	// Close stops the source and waits until it is stopped. Its error
	// says the source failed (a background open, the batch feed): the
	// partition's next Open reads through sarama's partition consumer;
	// or, as Next's, that the position was lost (LostPosition), which is
	// not a failure.
	Close() error
}

// ErrSourceEnded ends a Source that stopped on its own: a failed
// background open, a batch feed error retrying does not mend, or sarama's
// partition consumer giving up on the partition.
var ErrSourceEnded = errors.New("fetch: the source ended")

// ErrClosing ends the open of sarama's partition consumer that the
// group's close stopped waiting for.
var ErrClosing = errors.New("fetch: closing")

// OutOfRangeFunc decides where to go when the start offset is out of the
// log's range (err): it returns the offset to open at instead, or an
// error that ends the open.
type OutOfRangeFunc func(start int64, err error) (int64, error)

// Partition opens Sources for one partition, one after another: after a
// Source failed, the next Open reads through sarama's partition consumer.
// It belongs to one goroutine.
type Partition struct {
	e          *Engine
	ctx        context.Context // ends every fetch and Source of the partition
	topic      string
	partition  int32
	mark       *atomic.Int64 // the partition's high-water mark (nil: none)
	outOfRange OutOfRangeFunc
	positions  *readPositions // how far it was read: an offset out of range there is lost, not a stored one
	failed     bool           // the last Source failed: open the next one plainly
	// reopened says a Source was opened before: a seek, a pause or a
	// fallback reopens, and its first fetch is no rebalance's (ExpectOpen).
	reopened bool
}

// Partition returns the opener of Sources for topic/partition, fetching
// until ctx ends. Every Source sets mark (nil: none) to the partition's
// high-water mark; outOfRange (nil: none) handles a start offset out of
// the log's range.
func (e *Engine) Partition(ctx context.Context, topic string, partition int32, mark *atomic.Int64, outOfRange OutOfRangeFunc) *Partition {
	return &Partition{e: e, ctx: ctx, topic: topic, partition: partition, mark: mark, outOfRange: outOfRange,
		positions: newReadPositions(e.env.client, topic, partition)}
}

// Open returns a Source of the partition's messages from start on
// (negative: Config.Initial). With Config.Batches, where direct fetches
// apply, it is the batch feed; otherwise sarama's partition consumer,
// which opens in the background while the first batch, fetched directly,
// goes out. After a Source that failed, Open opens sarama's partition
// consumer before it returns. Only that open returns errors, among them a
// position lost mid-stream (see LostPosition).
func (p *Partition) Open(start int64) (Source, error) {
	failed := p.failed
	p.failed = false
	defer func() { p.reopened = true }()
	conf := p.e.env.config
	if !failed && conf.Batches && directFetchApplies(conf.Config) {
		return p.feedSource(start), nil
	}
	if !failed {
		if prefix := p.fastStart(start); len(prefix) > 0 {
			// Opening asks the leader for the partition's oldest and
			// newest offsets, one request after the other: hand the prefix
			// out meanwhile. Its end is in range (the fetch just returned it).
			return p.openAsync(prefix), nil
		}
	}
	pc, err := p.open(start)
	if err != nil {
		return nil, err
	}
	return p.consumerSource(pc), nil
}

// closed notes how a Source of the partition ended: with err, but for a
// lost position, the next Open reads through sarama's partition consumer.
func (p *Partition) closed(err error) error {
	if fallsBack(err) {
		p.failed = true
	}
	return err
}

// fallsBack reports whether a Source's end with err makes the partition's
// next Open read through sarama's partition consumer: any error but a lost
// position.
func fallsBack(err error) bool {
	_, lost := LostPosition(err)
	return err != nil && !lost
}

// fastStart returns the first batch at start through a direct fetch, or
// nothing when that does not apply or fails: sarama's partition consumer
// then starts at start as usual.
func (p *Partition) fastStart(start int64) []*sarama.ConsumerMessage {
	msgs, err := p.e.busy.fetch(p.ctx, p.topic, p.partition, start)
	if err != nil {
		p.e.env.log.Debug("direct first fetch failed; using the partition consumer", "topic", p.topic,
			"partition", p.partition, "offset", start, "err", err)
		return nil
	}
	return msgs
}

// open opens sarama's partition consumer at start (negative:
// Config.Initial). A start out of the log's range that the partition was
// read through is lost (a *TruncationError or a *RetentionError), or
// opened again after the retry backoff while the log holds it after all
// (a stale answer); any other goes to outOfRange, which says where to open
// instead. See docs/batch-feed.md, "Out of range mid-stream".
func (p *Partition) open(start int64) (sarama.PartitionConsumer, error) {
	if start < 0 {
		start = p.e.env.config.Initial
	}
	retry := newFeedRetry(p.e.env.client, p.e.env.config.Config, p.topic)
	for {
		pc, err := p.consumePartition(start)
		if !errors.Is(err, sarama.ErrOffsetOutOfRange) {
			if err == nil {
				p.positions.reach(start) // in range: sarama checked
			}
			return pc, err
		}
		explained := p.positions.explain(p.ctx, start, err)
		if explained == err && p.outOfRange != nil {
			resolved, rerr := p.outOfRange(start, err)
			if rerr != nil {
				return nil, rerr
			}
			pc, err = p.consumePartition(resolved)
			if err == nil {
				p.positions.reach(resolved)
			}
			return pc, err
		}
		if !retry.again(p.ctx, explained) {
			return nil, explained
		}
	}
}

// consumePartition opens sarama's partition consumer at offset, until the
// group closes (ErrClosing). sarama's open takes no context; one the
// close stopped waiting for is closed once it opens.
func (p *Partition) consumePartition(offset int64) (sarama.PartitionConsumer, error) {
	type opened struct {
		pc  sarama.PartitionConsumer
		err error
	}
	done := make(chan opened, 1)
	go func() {
		pc, err := p.e.deps.Consumer.ConsumePartition(p.topic, p.partition, offset)
		done <- opened{pc, err}
	}()
	select {
	case r := <-done:
		return r.pc, r.err
	case <-p.e.deps.Closing:
		go func() {
			if r := <-done; r.err == nil {
				closePartitionConsumer(r.pc)
			}
		}()
		return nil, ErrClosing
	}
}
