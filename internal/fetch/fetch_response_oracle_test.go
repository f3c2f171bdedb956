package fetch

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/IBM/sarama"
)

// The decoder's tests compare it with sarama's: a response is encoded by
// sarama (through a MockBroker, read back with the own connection's
// roundTrip), or built from such bytes and cut; sarama decodes it through
// a Broker reading a fake broker's answer (saramaOracle), and the old path
// (scanRecords) reads sarama's blocks; the new one (scanAnswer) reads ours.

// kafkaVersionFor returns a cluster version for which the fetchers send
// Fetch version v.
func kafkaVersionFor(v int16) sarama.KafkaVersion {
	for _, kv := range []sarama.KafkaVersion{sarama.V0_11_0_0, sarama.V1_0_0_0, sarama.V1_1_0_0, sarama.V2_0_0_0,
		sarama.V2_1_0_0, sarama.V2_3_0_0, sarama.V2_7_0_0} {
		if fetchVersion(kv) == v {
			return kv
		}
	}
	panic(fmt.Sprintf("no cluster version sends Fetch v%d", v))
}

// fetchVersions are the versions the fetchers send.
var fetchVersions = []int16{5, 6, 7, 8, 10, 11, 12}

func oracleConfig(v int16) *sarama.Config {
	conf := sarama.NewConfig()
	conf.Version = kafkaVersionFor(v)
	conf.ApiVersionsRequest = false
	return conf
}

// encodeWithSarama returns the body of resp as sarama encodes it at
// version v.
func encodeWithSarama(tb testing.TB, resp *sarama.FetchResponse, v int16) []byte {
	tb.Helper()
	resp.Version = v
	mock := sarama.NewMockBroker(tb, 1)
	defer mock.Close()
	mock.SetHandlerByMap(map[string]sarama.MockResponse{"FetchRequest": sarama.NewMockWrapper(resp)})
	conf, capture := capturingConfig(oracleConfig(v), &net.Dialer{})
	b := sarama.NewBroker(mock.Addr())
	if err := b.Open(conf); err != nil {
		tb.Fatal(err)
	}
	defer func() { _ = b.Close() }()
	c := &ownFetchConn{broker: b, capture: capture, conf: conf}
	body, got, err := c.roundTrip(fetchRequestFields{maxBytes: math.MaxInt32}, []*fetchWant{{topic: "t", partition: 0, size: 1 << 20}})
	if err != nil || got != v {
		tb.Fatalf("round trip: version %d, err %v", got, err)
	}
	return body
}

// saramaOracle decodes response bodies with sarama: a Broker fetches
// from a fake broker that answers with the body given.
type saramaOracle struct {
	version int16
	conf    *sarama.Config
	ln      net.Listener
	broker  *sarama.Broker
	served  sync.WaitGroup

	mu   sync.Mutex
	body []byte
}

func newSaramaOracle(tb testing.TB, v int16) *saramaOracle {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	o := &saramaOracle{version: v, conf: oracleConfig(v), ln: ln}
	o.served.Add(1)
	go o.serve()
	tb.Cleanup(o.close)
	return o
}

func (o *saramaOracle) close() {
	_ = o.ln.Close()
	if o.broker != nil {
		_ = o.broker.Close()
	}
	o.served.Wait()
}

// serve answers every request on every connection with the body set.
func (o *saramaOracle) serve() {
	defer o.served.Done()
	var conns sync.WaitGroup
	defer conns.Wait()
	for {
		conn, err := o.ln.Accept()
		if err != nil {
			return
		}
		conns.Add(1)
		go func() {
			defer conns.Done()
			defer conn.Close()
			for {
				var size [4]byte
				if _, err := io.ReadFull(conn, size[:]); err != nil {
					return
				}
				req := make([]byte, binary.BigEndian.Uint32(size[:]))
				if _, err := io.ReadFull(conn, req); err != nil {
					return
				}
				o.mu.Lock()
				body := o.body
				o.mu.Unlock()
				head := binary.BigEndian.AppendUint32(nil, 0)
				head = append(head, req[4:8]...) // the correlation id
				if o.version >= 12 {
					head = append(head, 0) // no tagged field
				}
				binary.BigEndian.PutUint32(head, uint32(len(head)-4+len(body)))
				if _, err := conn.Write(append(head, body...)); err != nil {
					return
				}
			}
		}()
	}
}

// decode returns sarama's reading of body. The throttle time is read
// from body and zeroed in what sarama's Broker gets: a Broker answered one
// holds its next request back that long.
func (o *saramaOracle) decode(tb testing.TB, body []byte) (*sarama.FetchResponse, error) {
	var throttle time.Duration
	if len(body) >= 4 {
		throttle = time.Duration(int32(binary.BigEndian.Uint32(body))) * time.Millisecond
		body = append([]byte{0, 0, 0, 0}, body[4:]...)
	}
	o.mu.Lock()
	o.body = body
	o.mu.Unlock()
	if o.broker == nil {
		o.broker = sarama.NewBroker(o.ln.Addr().String())
		if err := o.broker.Open(o.conf); err != nil {
			tb.Fatal(err)
		}
	}
	req := newFetchRequest(o.conf)
	req.AddBlock("t", 0, 0, 1<<20, -1)
	resp, err := o.broker.Fetch(req)
	if ok, _ := o.broker.Connected(); !ok {
		_ = o.broker.Close()
		o.broker = nil
	}
	if resp != nil {
		resp.ThrottleTime = throttle
	}
	return resp, err
}

// compareWithSarama checks that ours, decoded from the body sarama read as
// theirs, answers every partition as the old path does, for wants at
// offsets around every batch, with several limits.
func compareWithSarama(t testing.TB, theirs *sarama.FetchResponse, ours *fetchAnswer) {
	t.Helper()
	if ours.throttle != theirs.ThrottleTime || len(ours.partitions) == 0 != (len(theirs.Blocks) == 0) {
		t.Fatalf("throttle %v, %d partitions; sarama: %v, %d topics", ours.throttle, len(ours.partitions), theirs.ThrottleTime, len(theirs.Blocks))
	}
	if theirs.Version >= 7 && (int16(ours.errCode) != theirs.ErrorCode || ours.sessionID != theirs.SessionID) {
		t.Fatalf("error %d, session %d; sarama: %d, %d", ours.errCode, ours.sessionID, theirs.ErrorCode, theirs.SessionID)
	}
	for topic, blocks := range theirs.Blocks {
		for partition, block := range blocks {
			p := ours.partition(topic, partition)
			if p == nil {
				t.Fatalf("%s/%d: missing", topic, partition)
			}
			if p.err != block.Err || p.hwm != block.HighWaterMarkOffset || p.lastStable != block.LastStableOffset ||
				p.logStart != block.LogStartOffset || p.preferredReplica != block.PreferredReadReplica ||
				len(p.aborted) != len(block.AbortedTransactions) {
				t.Fatalf("%s/%d: err %v hwm %d lso %d start %d replica %d aborted %d; sarama: %v %d %d %d %d %d", topic, partition,
					p.err, p.hwm, p.lastStable, p.logStart, p.preferredReplica, len(p.aborted), block.Err, block.HighWaterMarkOffset,
					block.LastStableOffset, block.LogStartOffset, block.PreferredReadReplica, len(block.AbortedTransactions))
			}
			for i, a := range block.AbortedTransactions {
				if p.aborted[i] != (abortedTransaction{a.ProducerID, a.FirstOffset}) {
					t.Fatalf("%s/%d: aborted %v; sarama %v", topic, partition, p.aborted[i], *a)
				}
			}
			if d, _ := decodeRecords(p.records); legacy(block) || d.legacy {
				continue // sarama's partition consumer reads those, either way
			}
			if block.Partial && denseCompressedBatch(p.records) {
				continue // read whole here, cut off by sarama (TestCompressedBatchMayHoldMoreRecordsThanBytes)
			}
			for _, offset := range wantOffsets(block) {
				for _, limit := range []int{1, 2, 5, math.MaxInt} {
					w := &fetchWant{topic: topic, partition: partition, offset: offset, limit: limit}
					comparePartition(t, block, p, w)
				}
			}
		}
	}
}

// denseCompressedBatch reports whether records starts with a whole
// compressed batch holding more records than the bytes after its header,
// which sarama reads as cut off and this package reads whole.
func denseCompressedBatch(records []byte) bool {
	if len(records) < recordBatchHeaderSize {
		return false
	}
	be := binary.BigEndian
	codec := int8(be.Uint16(records[21:])) & codecMask
	count := int(int32(be.Uint32(records[57:])))
	whole := int(int32(be.Uint32(records[8:])))-recordBatchOverhead <= len(records)-recordBatchHeaderSize
	return codec != 0 && whole && count > len(records)-recordBatchHeaderSize
}

// legacy reports whether sarama read a legacy message set in block.
func legacy(block *sarama.FetchResponseBlock) bool {
	for _, r := range block.RecordsSet {
		if r != nil && r.MsgSet != nil {
			return true
		}
	}
	return false
}

// wantOffsets are the offsets a want is tried at for block.
func wantOffsets(block *sarama.FetchResponseBlock) []int64 {
	offsets := []int64{0, block.HighWaterMarkOffset}
	for _, r := range block.RecordsSet {
		if b := r.RecordBatch; b != nil {
			last := b.FirstOffset + int64(b.LastOffsetDelta)
			offsets = append(offsets, b.FirstOffset, b.FirstOffset+1, last, last+1)
		}
	}
	if end, ok := emptyBatchesEnd(block); ok {
		offsets = append(offsets, end-1, end)
	}
	return offsets
}

// comparePartition checks that scanAnswer answers w from p as scanRecords
// does from block: the same error, next offset and mark, the same bytes
// held, and the same messages, made at once or in slabs of three.
func comparePartition(t testing.TB, block *sarama.FetchResponseBlock, p *partitionAnswer, w *fetchWant) {
	t.Helper()
	want, got := scanRecords(block, w), scanAnswer(p, w)
	where := fmt.Sprintf("%s/%d at %d, limit %d", w.topic, w.partition, w.offset, w.limit)
	if !sameError(got.err, want.err) || got.next != want.next || got.hwm != want.hwm || got.messages() != want.messages() {
		t.Fatalf("%s: err %v next %d hwm %d messages %d; old path: err %v next %d hwm %d messages %d", where,
			got.err, got.next, got.hwm, got.messages(), want.err, want.next, want.hwm, want.messages())
	}
	if got.held() != want.held() {
		t.Fatalf("%s: holds %d bytes; old path %d", where, got.held(), want.held())
	}
	want.parse()
	sliced := scanAnswer(p, w)
	got.parse()
	if got.bytes != want.bytes {
		t.Fatalf("%s: made messages hold %d bytes; old path %d", where, got.bytes, want.bytes)
	}
	sameMessages(t, where, got.msgs, want.msgs)
	if sliced.unparsed != nil {
		var msgs []*sarama.ConsumerMessage
		for sliced.unparsed.left() > 0 {
			before := len(msgs)
			if msgs, _ = sliced.unparsed.take(msgs, 3); len(msgs) == before {
				t.Fatalf("%s: take made nothing after %d messages", where, before)
			}
		}
		sameMessages(t, where+", in slabs", msgs, want.msgs)
	}
}

// sameError reports whether two scans' errors say the same: both none, or
// the same sentinel or broker error.
func sameError(a, b error) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return errors.Is(a, b) || errors.Is(b, a) || a.Error() == b.Error()
}

func sameMessages(t testing.TB, where string, got, want []*sarama.ConsumerMessage) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d messages; old path %d", where, len(got), len(want))
	}
	for i := range got {
		if !reflect.DeepEqual(*got[i], *want[i]) {
			t.Fatalf("%s: message %d is\n%+v\nold path:\n%+v", where, i, *got[i], *want[i])
		}
	}
}
