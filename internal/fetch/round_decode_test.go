package fetch

import (
	"context"
	"encoding/binary"
	"errors"
	"io"
	"log/slog"
	"net"
	"sync"
	"testing"

	"github.com/IBM/sarama"
)

// rawFetchBroker is a broker that answers Fetch v11 requests by hand, so a
// partition can be answered with null records (records length -1), which
// sarama's encoders never write: partition 1 of t gets
// UNSUPPORTED_COMPRESSION_TYPE with null records, every other partition
// no records and no error. It records the partitions of each request.
type rawFetchBroker struct {
	ln     net.Listener
	mu     sync.Mutex
	rounds [][]int32
	epochs []int32 // CurrentLeaderEpoch of every partition of every request
}

func newRawFetchBroker(t *testing.T) *rawFetchBroker {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	b := &rawFetchBroker{ln: ln}
	var conns sync.WaitGroup
	t.Cleanup(func() { _ = ln.Close(); conns.Wait() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			conns.Add(1)
			go func() {
				defer conns.Done()
				defer c.Close()
				for b.serve(c) == nil {
				}
			}()
		}
	}()
	return b
}

// serve reads one Fetch v11 request from c and answers it.
func (b *rawFetchBroker) serve(c net.Conn) error {
	var size int32
	if err := binary.Read(c, binary.BigEndian, &size); err != nil {
		return err
	}
	req := make([]byte, size)
	if _, err := io.ReadFull(c, req); err != nil {
		return err
	}
	be := binary.BigEndian
	corr := be.Uint32(req[4:])
	off := 8 + 2 + int(be.Uint16(req[8:])) // past the client id
	off += 4 + 4 + 4 + 4 + 1 + 4 + 4       // replica, max wait, min bytes, max bytes, isolation, session, epoch
	var parts []int32
	for range be.Uint32(req[off:]) { // topics (only t)
		off += 4
		off += 2 + int(be.Uint16(req[off:]))
		n := be.Uint32(req[off:])
		off += 4
		for range n {
			parts = append(parts, int32(be.Uint32(req[off:])))
			b.mu.Lock()
			b.epochs = append(b.epochs, int32(be.Uint32(req[off+4:])))
			b.mu.Unlock()
			off += 4 + 4 + 8 + 8 + 4 // partition, leader epoch, offset, log start, max bytes
		}
	}
	b.mu.Lock()
	b.rounds = append(b.rounds, parts)
	b.mu.Unlock()

	var res []byte
	put16 := func(v int16) { res = be.AppendUint16(res, uint16(v)) }
	put32 := func(v int32) { res = be.AppendUint32(res, uint32(v)) }
	put64 := func(v int64) { res = be.AppendUint64(res, uint64(v)) }
	put32(int32(corr))
	put32(0) // throttle
	put16(0) // error
	put32(0) // session
	put32(1) // topics
	put16(1) // name length
	res = append(res, 't')
	put32(int32(len(parts)))
	for _, p := range parts {
		put32(p)
		if p == 1 {
			put16(int16(sarama.ErrUnsupportedCompressionType))
		} else {
			put16(0)
		}
		put64(0)  // high-water mark
		put64(0)  // last stable offset
		put64(0)  // log start offset
		put32(-1) // aborted transactions: null
		put32(-1) // preferred read replica
		if p == 1 {
			put32(-1) // records: null
		} else {
			put32(0)
		}
	}
	out := be.AppendUint32(nil, uint32(len(res)))
	_, err := c.Write(append(out, res...))
	return err
}

// rawClient names b the leader of every partition.
type rawClient struct{ leader *sarama.Broker }

func (c rawClient) Leader(string, int32) (*sarama.Broker, error) { return c.leader, nil }
func (c rawClient) RefreshMetadata(...string) error              { return nil }

// A response sarama cannot decode as a whole (a partition answered with
// null records, below Fetch v12) is isolated: each of its partitions is
// fetched alone, so only the partition with the bad answer gets an error,
// and its round-mates are answered as their own fetches say.
func TestFetcherIsolatesUndecodableResponse(t *testing.T) {
	rb := newRawFetchBroker(t)
	conf := sarama.NewConfig()
	conf.Version = sarama.V2_3_0_0 // Fetch v11: records are not yet a nullable compact field
	conf.ApiVersionsRequest = false
	leader := sarama.NewBroker(rb.ln.Addr().String())
	if err := leader.Open(conf); err != nil {
		t.Fatal(err)
	}
	defer leader.Close()
	f := newRoundFetcher(&env{config: &Config{Config: conf}, client: rawClient{leader}, log: slog.New(slog.DiscardHandler)})
	var wants []*fetchWant
	f.mu.Lock()
	for _, p := range []int32{0, 1, 2} {
		w := &fetchWant{ctx: context.Background(), topic: "t", partition: p, size: 1 << 20, limit: 10, done: make(chan fetchResult, 1)}
		wants = append(wants, w)
		f.pending[leader.ID()] = append(f.pending[leader.ID()], w)
	}
	f.leaders[leader.ID()] = leader
	f.inFlight[leader.ID()] = true
	f.mu.Unlock()
	runUntilAnswered(f, leader.ID())
	for _, w := range wants {
		r := <-w.done
		if bad := w.partition == 1; bad != (r.err != nil) {
			t.Errorf("partition %d: err %v; want an error only for partition 1 (rounds sent: %v)", w.partition, r.err, rb.rounds)
		}
	}
}

// A partition answered with an error and no records (Kafka's answer to an
// unreadable or forbidden topic) gets its error; its round-mates get their
// records in the same round.
func TestFetcherPartitionErrorStaysWithPartition(t *testing.T) {
	res := starvedResponse([]int32{0}, nil)
	res.AddError("t", 1, sarama.ErrUnsupportedCompressionType)
	res.AddError("t", 2, sarama.ErrTopicAuthorizationFailed)
	f, broker := starvedFetcher(t, res)
	got, rounds := runRound(t, f, broker, 0, 1, 2)
	if r := got[0]; r.err != nil || len(r.msgs) != 1 {
		t.Errorf("partition 0: %d messages, err %v; want its message", len(r.msgs), r.err)
	}
	for p, want := range map[int32]error{1: sarama.ErrUnsupportedCompressionType, 2: sarama.ErrTopicAuthorizationFailed} {
		if !errors.Is(got[p].err, want) {
			t.Errorf("partition %d: err %v, want %v", p, got[p].err, want)
		}
	}
	if rounds != 1 {
		t.Errorf("%d rounds, want 1", rounds)
	}
}
