package fetch

import (
	"context"
	"testing"

	"github.com/IBM/sarama"
)

// A busy round goes over the client's connection while a long poll is in
// flight on the own one, and sarama decodes its answer. sarama reads a
// whole compressed batch that holds more records than bytes (5,000 empty
// values in about 4 KB of zstd) as cut off; such a want is fetched again
// over the own connection, whose decoder reads it whole, instead of
// being answered "batch larger than the fetch size" (the feed would grow
// its size, fetch over the client's connection again while the long poll
// lasts, and end on sarama's partition consumer, which stalls on it).
func TestDenseBatchOverTheClientsConnectionIsFetchedAgainOverTheOwn(t *testing.T) {
	const n = 5000
	broker := sarama.NewMockBroker(t, 1)
	defer broker.Close()
	b := &sarama.RecordBatch{Version: 2, Codec: sarama.CompressionZSTD, ProducerID: -1, LastOffsetDelta: n - 1}
	for i := range n {
		b.Records = append(b.Records, &sarama.Record{OffsetDelta: int64(i), Value: []byte{}})
	}
	res := &sarama.FetchResponse{Version: fetchVersion(sarama.V2_8_0_0)}
	res.AddError("t", 0, sarama.ErrNoError)
	blk := res.GetBlock("t", 0)
	blk.HighWaterMarkOffset = n
	blk.RecordsSet = []*sarama.Records{{RecordBatch: b}}
	broker.SetHandlerByMap(map[string]sarama.MockResponse{
		"MetadataRequest": sarama.NewMockMetadataResponse(t).
			SetBroker(broker.Addr(), broker.BrokerID()).
			SetLeader("t", 0, broker.BrokerID()),
		"FetchRequest": sarama.NewMockWrapper(res),
	})
	f := newRoundFetcher(mockFetchGroup(t, broker))
	f.own = newOwnConns(f.env)
	defer f.closeConns()
	leader, err := f.env.client.Leader("t", 0)
	if err != nil {
		t.Fatal(err)
	}
	// A long poll in flight on the own connection: busy rounds go over
	// the client's.
	poll, isOwn := f.own.acquire(leader, true, false)
	if !isOwn {
		t.Fatal("the long poll did not get the own connection")
	}
	if conn, isOwn := f.own.acquire(leader, false, false); isOwn {
		t.Fatal("a busy round took the own connection beside a long poll")
	} else if conn != leader {
		t.Fatal("a busy round went elsewhere than the client's connection")
	}
	r := f.fetchUnparsed(context.Background(), "t", 0, 0, n, 1<<20, false)
	f.own.release(leader.ID(), poll, true)
	if r.err != nil || r.messages() != n || r.next != n {
		t.Fatalf("err %v, %d messages, next %d; want nil, %d, %d", r.err, r.messages(), r.next, n, n)
	}
}
