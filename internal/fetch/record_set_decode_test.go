package fetch

import (
	"encoding/binary"
	"errors"
	"math"
	"testing"
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
