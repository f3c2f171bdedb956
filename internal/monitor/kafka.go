package monitor

import (
	"context"
	"errors"

	"github.com/IBM/sarama"

	"github.com/zkgroup/kafka/internal/brokerconn"
)

// Kafka is the lag refresh's Leaders and ListOffsets over a sarama
// client. The leaders are the ones the client has cached (the fetches of
// the same partitions keep them there); a leader missing there is looked
// up by the client. ListOffsets requests go over connections of Kafka's
// own, one per leader, dialed with the client's settings (package
// brokerconn): cancelling a request shuts its socket, where one over the
// client's connections could only be waited out (Net.ReadTimeout). See
// docs/metrics.md, "Lag".
//
// Its methods are for the one goroutine of the lag refresh, not for
// concurrent use.
type Kafka struct {
	client sarama.Client
	conns  map[Broker]*ownConn
}

// ownConn is Kafka's own connection to one leader.
type ownConn struct {
	broker *sarama.Broker
	dialer *brokerconn.Dialer // dials broker's socket; CloseAll shuts it under a request in flight
}

// NewKafka returns the Leaders and ListOffsets of client. Nothing is
// dialed before the first HighWaterMarks.
func NewKafka(client sarama.Client) *Kafka {
	return &Kafka{client: client, conns: make(map[Broker]*ownConn)}
}

// Leaders implements Leaders with the client's Leader. A lookup that is
// not in the client's cache sends a metadata request over the client's
// connections, which cannot be cancelled: when ctx ends first, Leaders
// returns at once and that lookup ends with the client's timeouts (or
// its Close), setting nothing; the lookups after it are not made.
func (k *Kafka) Leaders(ctx context.Context, tps []TopicPartition) ([]Lookup, error) {
	done := make(chan []Lookup, 1)
	go func() { done <- k.lookup(ctx, tps) }()
	select {
	case out := <-done:
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		return out, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// lookup looks up the leader of each of tps until ctx ends.
func (k *Kafka) lookup(ctx context.Context, tps []TopicPartition) []Lookup {
	out := make([]Lookup, len(tps))
	for i, tp := range tps {
		if ctx.Err() != nil {
			return nil
		}
		b, err := k.client.Leader(tp.Topic, tp.Partition)
		if err != nil {
			out[i].Err = err
			continue
		}
		out[i].Leader = Broker{ID: b.ID(), Addr: b.Addr()}
	}
	return out
}

// HighWaterMarks implements ListOffsets over the own connection to
// broker, opened on first use in a round (the refresh closes them as each
// round ends). When ctx ends while the request is in
// flight, its socket is shut, so it fails at once. A failed request
// closes the connection (a sarama Broker whose connection broke fails
// every later request); the next round opens a new one.
func (k *Kafka) HighWaterMarks(ctx context.Context, broker Broker, tps []TopicPartition) (map[TopicPartition]int64, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	c := k.conn(broker)
	stop := context.AfterFunc(ctx, c.dialer.CloseAll)
	hwms, err := highWaterMarks(c.broker, k.client.Config().Version, tps)
	stop()
	if err != nil {
		k.drop(broker)
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, err
	}
	return hwms, nil
}

// Close implements ListOffsets: it closes the own connections.
func (k *Kafka) Close() {
	for b := range k.conns {
		k.drop(b)
	}
}

// conn returns the own connection to b, opening it if there is none.
func (k *Kafka) conn(b Broker) *ownConn {
	if c, ok := k.conns[b]; ok {
		return c
	}
	conf := k.client.Config()
	c := &ownConn{broker: ownBroker(b), dialer: brokerconn.NewDialer(conf)}
	_ = c.broker.Open(brokerconn.Config(conf, c.dialer)) // a failed dial fails the request
	k.conns[b] = c
	return c
}

// drop closes the own connection to b and forgets it. Nothing is in
// flight over it: only the refresh's goroutine sends.
func (k *Kafka) drop(b Broker) {
	c, ok := k.conns[b]
	if !ok {
		return
	}
	delete(k.conns, b)
	c.dialer.CloseAll()
	_ = c.broker.Close()
}

// ownBroker returns an unopened connection to b that carries its id:
// sarama registers a connection's per-broker metrics only for a Broker
// with an id, and sarama.NewBroker gives none. A metadata response's
// brokers are the one way sarama's API builds one with an id.
func ownBroker(b Broker) *sarama.Broker {
	var md sarama.MetadataResponse
	md.AddBroker(b.Addr, b.ID)
	return md.Brokers[0]
}

// highWaterMarks asks broker for the high-water marks of tps in one
// ListOffsets request. Partitions it answers with an error are left out.
func highWaterMarks(broker *sarama.Broker, version sarama.KafkaVersion, tps []TopicPartition) (map[TopicPartition]int64, error) {
	req := sarama.NewOffsetRequest(version)
	for _, tp := range tps {
		req.AddBlock(tp.Topic, tp.Partition, sarama.OffsetNewest, 1)
	}
	resp, err := broker.GetAvailableOffsets(req)
	if err != nil {
		return nil, err
	}
	out := make(map[TopicPartition]int64, len(tps))
	for _, tp := range tps {
		block := resp.GetBlock(tp.Topic, tp.Partition)
		if block == nil || !errors.Is(block.Err, sarama.ErrNoError) || len(block.Offsets) != 1 {
			continue
		}
		out[tp] = block.Offsets[0]
	}
	return out, nil
}
