package monitor

import (
	"context"
	"log/slog"
	"time"
)

// TopicPartition names one partition of one topic.
type TopicPartition struct {
	Topic     string
	Partition int32
}

// Partition is one owned partition whose lag the refresh keeps.
type Partition struct {
	TP TopicPartition
	// Offsets are the partition's offsets while this claim lasts: a later
	// claim of the same partition has others.
	Offsets PartitionOffsets
}

// PartitionOffsets is what the refresh reads and records of one owned
// partition's offsets; *offsets.Partition is one.
type PartitionOffsets interface {
	// SeeHighWaterMark records hwm, the high-water mark the partition's
	// leader reported.
	SeeHighWaterMark(hwm int64)
	// Lag returns the high-water mark minus the committed offset; -1
	// when there is no committed offset.
	Lag() int64
}

// Owned lists the partitions whose lag the refresh keeps.
type Owned interface {
	// Owned returns the partitions this instance owns now.
	Owned() []Partition
}

// LagGauges are the lag gauges the refresh sets.
type LagGauges interface {
	// SetLag sets p's lag gauge to lag, unless p's claim has ended since
	// Owned returned it: a gauge removed at a partition's end never comes
	// back.
	SetLag(p Partition, lag int64)
}

// Broker is a partition's leader, as a comparable key: the refresh sends
// one request per Broker.
type Broker struct {
	ID   int32
	Addr string
}

// Lookup is one partition's leader, or the error that kept it from being
// found.
type Lookup struct {
	Leader Broker
	Err    error
}

// Leaders finds the owned partitions' leaders.
type Leaders interface {
	// Leaders returns the lookup of each of tps, in order. When ctx ends
	// first it returns ctx's error, and the lookups are abandoned. The
	// refresh calls it once a round, with no tps when nothing is owned.
	Leaders(ctx context.Context, tps []TopicPartition) ([]Lookup, error)
}

// ListOffsets asks leaders for their partitions' high-water marks.
type ListOffsets interface {
	// HighWaterMarks asks broker, in one ListOffsets request, for the
	// high-water marks of tps (the latest offsets, as sarama's
	// Client.GetOffset asks); partitions it answers with an error are
	// left out. When ctx ends first, the request is cancelled and ctx's
	// error returned.
	HighWaterMarks(ctx context.Context, broker Broker, tps []TopicPartition) (map[TopicPartition]int64, error)
	// Close closes what HighWaterMarks opened. The refresh calls it at the
	// end of every round, so nothing it opened stays open between rounds.
	Close()
}

// lagRefresh refreshes the lag gauges of the owned partitions from their
// leaders' high-water marks.
type lagRefresh struct {
	owned   Owned
	leaders Leaders
	offsets ListOffsets
	gauges  LagGauges
	log     *slog.Logger
}

// every runs a round every interval until ctx ends.
func (r *lagRefresh) every(ctx context.Context, interval time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			r.round(ctx)
		}
	}
}

// round asks each leader of an owned partition for the high-water marks
// of all the owned partitions it leads, in one request, and sets each
// one's lag gauge. A partition whose leader cannot be asked keeps its
// gauge until a later round. Nothing is set once ctx has ended. The
// connections the round opened are closed as it ends: between rounds the
// group holds no more connections than its fetches do (docs/metrics.md,
// "Lag").
func (r *lagRefresh) round(ctx context.Context) {
	defer r.offsets.Close()
	owned := r.owned.Owned()
	tps := make([]TopicPartition, len(owned))
	for i, p := range owned {
		tps[i] = p.TP
	}
	// Looked up also when nothing is owned (which sends nothing), so
	// Leaders learns that no broker leads an owned partition any more.
	lookups, err := r.leaders.Leaders(ctx, tps)
	if err != nil || len(owned) == 0 {
		return
	}
	byLeader := make(map[Broker][]Partition)
	var leaders []Broker // in the order first seen, so rounds are alike
	for i, l := range lookups {
		p := owned[i]
		if l.Err != nil {
			r.log.Debug("lag refresh: no leader", "topic", p.TP.Topic, "partition", p.TP.Partition, "err", l.Err)
			continue
		}
		if _, ok := byLeader[l.Leader]; !ok {
			leaders = append(leaders, l.Leader)
		}
		byLeader[l.Leader] = append(byLeader[l.Leader], p)
	}
	for _, b := range leaders {
		parts := byLeader[b]
		asked := make([]TopicPartition, len(parts))
		for i, p := range parts {
			asked[i] = p.TP
		}
		hwms, err := r.offsets.HighWaterMarks(ctx, b, asked)
		if ctx.Err() != nil {
			return
		}
		if err != nil {
			r.log.Debug("lag refresh: ListOffsets failed", "broker", b.ID, "err", err)
			continue
		}
		for _, p := range parts {
			hwm, ok := hwms[p.TP]
			if !ok {
				continue
			}
			p.Offsets.SeeHighWaterMark(hwm)
			if lag := p.Offsets.Lag(); lag >= 0 {
				r.gauges.SetLag(p, lag)
			}
		}
	}
}
