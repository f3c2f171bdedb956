package consumergroup

import (
	"context"
	"errors"
	"sync"

	"github.com/IBM/sarama"
)

// firstFetcher reads the first batch of newly claimed partitions with direct
// fetches to their leaders. sarama's consumer batches new partition
// subscriptions for 100 ms before its first fetch, which alone would break
// the handoff promise (a gained partition delivers within 100 ms of the
// previous owner's release). The worker starts its partition consumer right
// after this batch, at the offset where the batch ends.
//
// Requests to one broker are coalesced: while a fetch to a broker is in
// flight, new partitions queue up and go out together in the next one, so a
// rebalance that gains 32 partitions costs a couple of round trips, not 32
// (Kafka answers the requests of one connection in order).
type firstFetcher struct {
	cg *ConsumerGroup

	mu       sync.Mutex
	pending  map[int32][]*fetchWant // by broker id
	inFlight map[int32]bool
}

type fetchWant struct {
	topic     string
	partition int32
	offset    int64
	limit     int              // messages kept at most (at least one)
	done      chan fetchResult // buffered: the fetcher never blocks on it
}

type fetchResult struct {
	msgs []*sarama.ConsumerMessage
	err  error
}

func newFirstFetcher(cg *ConsumerGroup) *firstFetcher {
	return &firstFetcher{cg: cg, pending: make(map[int32][]*fetchWant), inFlight: make(map[int32]bool)}
}

// fetch returns the messages at and after offset in the first batch the
// leader returns, at most ChannelBufferSize of them. It returns nothing,
// and no error, when the fast path does not apply: no stored offset, a
// Kafka version older than 0.11 (no record batches), read-committed
// isolation (aborted transactions need filtering), or a legacy message set
// in the response. Errors are the broker's (for
// example sarama.ErrOffsetOutOfRange); the caller falls back to the
// partition consumer alone.
func (f *firstFetcher) fetch(ctx context.Context, topic string, partition int32, offset int64) ([]*sarama.ConsumerMessage, error) {
	conf := f.cg.config.Config
	if offset < 0 || !conf.Version.IsAtLeast(sarama.V0_11_0_0) || conf.Consumer.IsolationLevel != sarama.ReadUncommitted {
		return nil, nil
	}
	f.cg.log.Debug("first fetch", "topic", topic, "partition", partition, "offset", offset)
	broker, err := f.cg.client.Leader(topic, partition)
	if err != nil {
		return nil, err
	}
	w := &fetchWant{topic: topic, partition: partition, offset: offset, limit: max(conf.ChannelBufferSize, 1), done: make(chan fetchResult, 1)}
	f.mu.Lock()
	id := broker.ID()
	f.pending[id] = append(f.pending[id], w)
	if !f.inFlight[id] {
		f.inFlight[id] = true
		go f.run(broker)
	}
	f.mu.Unlock()
	select {
	case r := <-w.done:
		applyInterceptors(conf.Consumer.Interceptors, r.msgs)
		return r.msgs, r.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// applyInterceptors runs sarama's Consumer.Interceptors on msgs, as sarama's
// partition consumer does on every message it hands out, so the directly
// fetched first batch is traced, decrypted or rewritten like the rest. A
// panicking interceptor is skipped for that message, as sarama does.
func applyInterceptors(interceptors []sarama.ConsumerInterceptor, msgs []*sarama.ConsumerMessage) {
	for _, m := range msgs {
		for _, ic := range interceptors {
			func() {
				defer func() { _ = recover() }()
				ic.OnConsume(m)
			}()
		}
	}
}

// run sends the queued wants of one broker, one request per round, until
// none are left.
func (f *firstFetcher) run(broker *sarama.Broker) {
	id := broker.ID()
	for {
		f.mu.Lock()
		batch, rest := takeDistinct(f.pending[id])
		f.pending[id] = rest
		if len(batch) == 0 {
			f.inFlight[id] = false
			f.mu.Unlock()
			return
		}
		f.mu.Unlock()
		f.round(broker, batch)
	}
}

// takeDistinct splits wants into a batch with at most one want per
// partition (a fetch request holds each partition once) and the rest.
func takeDistinct(wants []*fetchWant) (batch, rest []*fetchWant) {
	seen := make(map[topicPartition]bool, len(wants))
	for _, w := range wants {
		tp := topicPartition{w.topic, w.partition}
		if seen[tp] {
			rest = append(rest, w)
			continue
		}
		seen[tp] = true
		batch = append(batch, w)
	}
	return batch, rest
}

func (f *firstFetcher) round(broker *sarama.Broker, batch []*fetchWant) {
	conf := f.cg.config.Config
	req := &sarama.FetchRequest{
		Version:   5, // record batches, isolation level, log start offset
		MinBytes:  1,
		MaxBytes:  conf.Consumer.Fetch.MaxBytes,
		Isolation: sarama.ReadUncommitted,
	}
	for _, w := range batch {
		req.AddBlock(w.topic, w.partition, w.offset, conf.Consumer.Fetch.Default, -1)
	}
	f.cg.log.Debug("first fetch round", "broker", broker.ID(), "partitions", len(batch))
	resp, err := broker.Fetch(req)
	f.cg.log.Debug("first fetch round answered", "broker", broker.ID(), "partitions", len(batch), "err", err)
	for _, w := range batch {
		if err != nil {
			w.done <- fetchResult{err: err}
			continue
		}
		msgs, perr := parseFirstBatch(resp.GetBlock(w.topic, w.partition), w)
		w.done <- fetchResult{msgs: msgs, err: perr}
	}
}

// parseFirstBatch returns the messages of block at and after w.offset, at
// most w.limit of them: the caller holds them until they are handed out,
// and the partition consumer starts after the last one, so nothing is
// skipped. A whole first batch (up to Consumer.Fetch.Default bytes, tens of
// thousands of small messages) would all be turned into messages only to
// be dropped; the kept ones alias the response buffer, as sarama's do.
func parseFirstBatch(block *sarama.FetchResponseBlock, w *fetchWant) ([]*sarama.ConsumerMessage, error) {
	if block == nil {
		return nil, errors.New("fetch response without the partition")
	}
	if !errors.Is(block.Err, sarama.ErrNoError) {
		return nil, block.Err
	}
	limit := max(w.limit, 1)
	var msgs []*sarama.ConsumerMessage
	for _, recs := range block.RecordsSet {
		if recs == nil {
			continue
		}
		batch := recs.RecordBatch
		if batch == nil {
			return nil, nil // a legacy message set: leave it to sarama
		}
		if batch.Control {
			continue
		}
		for _, rec := range batch.Records {
			o := batch.FirstOffset + rec.OffsetDelta
			if o < w.offset {
				continue
			}
			ts := batch.FirstTimestamp.Add(rec.TimestampDelta)
			if batch.LogAppendTime {
				ts = batch.MaxTimestamp
			}
			msgs = append(msgs, &sarama.ConsumerMessage{
				Topic: w.topic, Partition: w.partition, Offset: o,
				Key: rec.Key, Value: rec.Value, Timestamp: ts, Headers: rec.Headers,
			})
			if len(msgs) == limit {
				return msgs, nil
			}
		}
	}
	return msgs, nil
}
