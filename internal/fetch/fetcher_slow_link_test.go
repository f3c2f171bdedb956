package fetch

import (
	"bytes"
	"context"
	"math"
	"testing"
	"time"

	"github.com/IBM/sarama"
)

// The fetchers' own connections read with the client's Net.ReadTimeout
// (30 s by default). A fetch response takes as long to arrive as its size
// over the link: a busy round asks for up to Consumer.Fetch.MaxBytes / 2
// (50 MiB by default). As first built, own connections read with
// Consumer.MaxWaitTime + 5 s (5.5 s by default), and over a slow link every
// large round failed with an i/o timeout, was retried at the same size
// and the partitions then fell back to sarama's partition consumer, which
// read the same response fine.
//
// Here one partition's 3 MiB record batch comes over a 512 KiB/s link
// (6 s); the client's Net.ReadTimeout is the default 30 s.
func TestOwnConnReadsLargeResponseOnSlowLink(t *testing.T) {
	broker := sarama.NewMockBroker(t, 1)
	defer broker.Close()
	res := &sarama.FetchResponse{Version: fetchVersion(sarama.V2_8_0_0)}
	res.AddRecordBatch("t", 0, nil, sarama.ByteEncoder(bytes.Repeat([]byte("x"), 3<<20)), 0, 0, false)
	res.GetBlock("t", 0).HighWaterMarkOffset = 1
	broker.SetHandlerByMap(map[string]sarama.MockResponse{
		"MetadataRequest": leaderMetadata(t, broker, broker),
		"FetchRequest":    sarama.NewMockWrapper(res),
	})
	cg := mockFetchGroup(t, broker)
	proxy := &relayProxy{bytesPerSecond: 512 << 10}
	defer proxy.closeAll()
	fconf := *cg.config.Config
	fconf.Net.Proxy.Enable = true
	fconf.Net.Proxy.Dialer = proxy
	fconf.Consumer.Fetch.Default = 4 << 20
	cfg := &Config{Config: &fconf}
	cfg.Batches = true
	cg.config = cfg
	busy, idle := newFetchers(cg)
	defer idle.closeConns()
	defer busy.closeConns()
	began := time.Now()
	r := busy.fetchSized(context.Background(), "t", 0, 0, math.MaxInt, fconf.Consumer.Fetch.Default)
	if r.err != nil {
		t.Fatalf("busy fetch of a 3 MiB batch over a 512 KiB/s link failed after %v: %v (Net.ReadTimeout is %v)",
			time.Since(began).Round(time.Millisecond), r.err, fconf.Net.ReadTimeout)
	}
	if len(r.msgs) != 1 {
		t.Fatalf("%d messages, want 1", len(r.msgs))
	}
}
