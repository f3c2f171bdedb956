package fetch

import (
	"encoding/binary"
	"errors"
	"math"
	"testing"

	"github.com/IBM/sarama"
)

// recordReader.varint reads what binary.Varint reads, and fails where it
// fails; varintSize is binary.PutVarint's size.
func TestRecordReaderVarintIsBinaryVarint(t *testing.T) {
	values := []int64{0, 1, -1, 63, -64, 64, -65, 8191, 8192, -8193, 1 << 40, math.MaxInt64, math.MinInt64}
	for _, v := range values {
		buf := binary.AppendVarint(nil, v)
		r := recordReader{buf: buf}
		got, err := r.varint()
		if err != nil || got != v || r.off != len(buf) {
			t.Fatalf("%d: read %d (%d bytes), err %v", v, got, r.off, err)
		}
		if varintSize(v) != len(buf) {
			t.Fatalf("%d: size %d, want %d", v, varintSize(v), len(buf))
		}
	}
	for _, buf := range [][]byte{{}, {0x80}, {0xff, 0xff}, {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02},
		{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01}, {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01}} {
		_, n := binary.Varint(buf)
		r := recordReader{buf: buf}
		_, err := r.varint()
		switch {
		case n == 0 && !errors.Is(err, errShortRecords):
			t.Fatalf("%x: short for binary.Varint, err %v", buf, err)
		case n < 0 && !errors.Is(err, errMalformedRecords):
			t.Fatalf("%x: overflow for binary.Varint, err %v", buf, err)
		case n > 0 && (err != nil || r.off != n):
			t.Fatalf("%x: binary.Varint reads %d bytes; read %d, err %v", buf, n, r.off, err)
		}
	}
}

// A compressed batch holds more records than it has bytes when its
// records compress well (empty values, tombstones): its count is checked
// against the records once decompressed, not against the compressed bytes.
// Read the latter way (sarama's), a whole batch of 5,000 empty records,
// zstd-compressed to about 4 KB and alone at the end of the log, read as cut
// off: every fetch of it failed as a batch larger than the fetch size.
func TestCompressedBatchMayHoldMoreRecordsThanBytes(t *testing.T) {
	const n = 5000
	for _, codec := range []sarama.CompressionCodec{sarama.CompressionNone, sarama.CompressionGZIP,
		sarama.CompressionSnappy, sarama.CompressionLZ4, sarama.CompressionZSTD} {
		b := &sarama.RecordBatch{Version: 2, Codec: codec, ProducerID: -1, LastOffsetDelta: n - 1}
		for i := range n {
			b.Records = append(b.Records, &sarama.Record{OffsetDelta: int64(i), Value: []byte{}})
		}
		resp := &sarama.FetchResponse{Version: 12}
		resp.AddError("t", 0, sarama.ErrNoError)
		blk := resp.GetBlock("t", 0)
		blk.HighWaterMarkOffset = n
		blk.RecordsSet = []*sarama.Records{{RecordBatch: b}}
		a, err := decodeFetchResponse(encodeWithSarama(t, resp, 12), 12)
		if err != nil {
			t.Fatalf("%v: %v", codec, err)
		}
		p := a.partition("t", 0)
		r := scanAnswer(p, &fetchWant{topic: "t", offset: 0, limit: n})
		if r.err != nil || r.messages() != n || r.next != n {
			t.Errorf("%v: %d records in %d bytes: err %v, %d messages, next %d; want nil, %d, %d",
				codec, n, len(p.records), r.err, r.messages(), r.next, n, n)
		}
	}
}
