package consumergroup

import (
	"errors"
	"time"

	"github.com/IBM/sarama"

	"github.com/zkgroup/kafka/internal/offsets"
	"github.com/zkgroup/kafka/kazoo"
)

// The group's monitors: the goroutines that keep the session gauges and
// the lag gauges current between the events that move them otherwise
// (commits, fence pauses). See docs/metrics.md.

// startMonitors starts the session watch and, with Metrics.LagInterval,
// the lag refresh. Both end with the group: the watch when the session is
// closed, the refresh at Close.
func (cg *ConsumerGroup) startMonitors() {
	cg.met().fenced.Update(0) // a HandlerGroup's previous session may have ended fenced
	go cg.watchSession()
	if every := cg.config.Metrics.LagInterval; every > 0 {
		go cg.refreshLagEvery(every)
	}
}

// watchSession keeps zkgroup-session-connected and
// zkgroup-session-expirations current from the session's state, as
// package kazoo learns it from go-zookeeper's event callback, until the
// session is closed.
func (cg *ConsumerGroup) watchSession() {
	m := cg.met()
	s, changed := cg.kazoo.Session()
	seen := s.Generation
	for {
		m.connected.Update(gaugeBool(s.Status == kazoo.SessionConnected))
		if s.Generation > seen { // an expired session was replaced
			m.expirations.Inc(int64(s.Generation - seen))
			seen = s.Generation
		}
		if s.Status == kazoo.SessionClosed {
			m.fenced.Update(0)
			return
		}
		<-changed
		s, changed = cg.kazoo.Session()
	}
}

func gaugeBool(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

// refreshLagEvery refreshes the lag gauges every interval until Close.
func (cg *ConsumerGroup) refreshLagEvery(every time.Duration) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-cg.stopper:
			return
		case <-t.C:
			cg.refreshLag()
		}
	}
}

// refreshLag asks each leader of an owned partition for the high-water
// marks of all the owned partitions it leads, in one ListOffsets request,
// and sets each one's lag gauge. The leaders are those the client knows
// (the fetches of the same partitions keep them); a partition whose
// leader cannot be asked keeps its gauge until the next round.
func (cg *ConsumerGroup) refreshLag() {
	byLeader := make(map[*sarama.Broker][]*offsets.Partition)
	for _, p := range cg.offsetManager.Snapshot() {
		if p.Claim == nil {
			continue // tracked through InitializePartition, not owned
		}
		b, err := cg.client.Leader(p.TP.Topic, p.TP.Partition)
		if err != nil {
			cg.log.Debug("lag refresh: no leader", "topic", p.TP.Topic, "partition", p.TP.Partition, "err", err)
			continue
		}
		byLeader[b] = append(byLeader[b], p)
	}
	for b, parts := range byLeader {
		hwms, err := highWaterMarks(b, cg.config.Version, parts)
		if err != nil {
			cg.log.Debug("lag refresh: ListOffsets failed", "broker", b.ID(), "err", err)
			continue
		}
		for _, p := range parts {
			hwm, ok := hwms[p.TP]
			if !ok {
				continue
			}
			p.SeeHighWaterMark(hwm)
			if lag := p.Lag(); lag >= 0 {
				cg.met().setLagIf(topicPartition(p.TP), lag, func() bool { return cg.offsetManager.Lookup(p.TP) == p })
			}
		}
	}
}

// highWaterMarks asks broker for the high-water marks of parts in one
// ListOffsets request (the latest offset, as sarama's Client.GetOffset
// asks for it). Partitions the broker answers with an error are left out.
func highWaterMarks(broker *sarama.Broker, version sarama.KafkaVersion, parts []*offsets.Partition) (map[offsets.TopicPartition]int64, error) {
	req := sarama.NewOffsetRequest(version)
	for _, p := range parts {
		req.AddBlock(p.TP.Topic, p.TP.Partition, sarama.OffsetNewest, 1)
	}
	resp, err := broker.GetAvailableOffsets(req)
	if err != nil {
		return nil, err
	}
	out := make(map[offsets.TopicPartition]int64, len(parts))
	for _, p := range parts {
		block := resp.GetBlock(p.TP.Topic, p.TP.Partition)
		if block == nil || !errors.Is(block.Err, sarama.ErrNoError) || len(block.Offsets) != 1 {
			continue
		}
		out[p.TP] = block.Offsets[0]
	}
	return out, nil
}
