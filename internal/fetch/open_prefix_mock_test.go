package fetch

import (
	"context"
	"log/slog"
	"sync/atomic"
	"testing"

	"github.com/IBM/sarama"
)

// Against sarama's MockBroker: without Batches, Open hands out the first
// batch fetched directly (ChannelBufferSize messages of it) while sarama's
// partition consumer opens after it; every offset comes once, in order,
// and the mark ends at the leader's.
func TestOpenPrefixThenPartitionConsumerMock(t *testing.T) {
	broker := sarama.NewMockBroker(t, 1)
	defer broker.Close()
	res := &sarama.FetchResponse{Version: 5}
	for o := int64(0); o < 10; o++ {
		res.AddRecord("t", 0, nil, sarama.StringEncoder("m"), o)
	}
	res.GetBlock("t", 0).HighWaterMarkOffset = 10
	broker.SetHandlerByMap(map[string]sarama.MockResponse{
		"MetadataRequest": sarama.NewMockMetadataResponse(t).
			SetBroker(broker.Addr(), broker.BrokerID()).
			SetLeader("t", 0, broker.BrokerID()),
		"OffsetRequest": sarama.NewMockOffsetResponse(t).
			SetOffset("t", 0, sarama.OffsetOldest, 0).
			SetOffset("t", 0, sarama.OffsetNewest, 10),
		"FetchRequest": sarama.NewMockWrapper(res),
	})
	conf := sarama.NewConfig()
	conf.Version = sarama.V0_11_0_0 // sarama's fetches are version 5 too, as the mock's answer
	conf.ApiVersionsRequest = false
	conf.Metadata.Retry.Max = 0
	conf.ChannelBufferSize = 3
	conf.Consumer.Return.Errors = true
	client, err := sarama.NewClient([]string{broker.Addr()}, conf)
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	consumer, err := sarama.NewConsumerFromClient(client)
	if err != nil {
		t.Fatal(err)
	}
	defer consumer.Close()
	e := NewEngine(Config{Config: conf}, Deps{Client: client, Consumer: consumer, Log: slog.New(slog.DiscardHandler)})
	defer e.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var mark atomic.Int64
	p := e.Partition(ctx, "t", 0, &mark, nil)
	src, err := p.Open(2)
	if err != nil {
		t.Fatal(err)
	}
	if s, ok := src.(*consumerSource); !ok || len(s.prefix) != 3 {
		t.Fatalf("Open = %T, want a prefix of 3 before sarama's consumer", src)
	}
	for o := int64(2); o < 10; o++ {
		next(t, src, o)
	}
	if err := src.Close(); err != nil {
		t.Fatal(err)
	}
	if got := mark.Load(); got != 10 {
		t.Fatalf("mark %d, want 10", got)
	}
}
