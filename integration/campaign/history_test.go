package campaign

import (
	"strings"
	"testing"
)

// A member killed mid-write leaves its last line cut short: ReadRecords
// skips it. A bad line followed by others is corruption: an error.
func TestReadRecordsToleratesACutLastLine(t *testing.T) {
	good := `{"delivery":{"r":"m0.1","p":1,"o":5,"v":"x","e":2,"at":"2026-01-01T00:00:00Z"}}
{"ack":{"p":1,"o":5,"v":"x","at":"2026-01-01T00:00:00Z"}}
`
	h := &History{}
	if err := h.ReadRecords(strings.NewReader(good + `{"delivery":{"r":"m0.1","p":1,`)); err != nil {
		t.Fatalf("cut last line: %v", err)
	}
	if len(h.Deliveries) != 1 || len(h.Acked) != 1 || h.Deliveries[0].Epoch != 2 || h.Acked[0].Offset != 5 {
		t.Fatalf("read %+v, want one delivery under epoch 2 and one ack of offset 5", h)
	}
	if err := (&History{}).ReadRecords(strings.NewReader("{bad\n" + good)); err == nil {
		t.Fatal("a bad line before good ones: no error")
	}
}
