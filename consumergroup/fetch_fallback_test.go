package consumergroup

import (
	"context"
	"errors"
	"log/slog"
	"testing"
	"time"

	"github.com/IBM/sarama"

	"github.com/zkgroup/kafka/internal/fetch"
)

// A partition the batch feed hands to sarama's partition consumer arrives
// on Errors() as a *FetchFallbackError inside a *PartitionError, naming
// the offset reading goes on from and the broker's error. Before, it was
// only logged.
func TestFetchFallbackOnErrors(t *testing.T) {
	broker := sarama.NewMockBroker(t, 1)
	defer broker.Close()
	res := &sarama.FetchResponse{Version: 12} // what the feed asks for at V2_8_0_0
	res.AddError("t", 0, sarama.ErrTopicAuthorizationFailed)
	broker.SetHandlerByMap(map[string]sarama.MockResponse{
		"MetadataRequest": sarama.NewMockMetadataResponse(t).
			SetBroker(broker.Addr(), broker.BrokerID()).
			SetLeader("t", 0, broker.BrokerID()),
		"FetchRequest": sarama.NewMockWrapper(res),
	})
	config := NewConfig()
	config.Version = sarama.V2_8_0_0
	config.ApiVersionsRequest = false // the mock broker does not answer it
	config.Metadata.Retry.Max = 0
	client, err := sarama.NewClient([]string{broker.Addr()}, config.Config)
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	cg := &ConsumerGroup{log: slog.New(slog.DiscardHandler), config: config, client: client,
		errors: make(chan error, 4), stopper: make(chan struct{})}
	e := cg.newFetchEngine()
	defer e.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	src, err := e.Partition(ctx, "t", 0, nil, nil).Open(7)
	if err != nil {
		t.Fatal(err)
	}
	wake := make(chan struct{})
	timer := time.AfterFunc(5*time.Second, func() { close(wake) })
	defer timer.Stop()
	if _, err := src.Next(wake); !errors.Is(err, fetch.ErrSourceEnded) {
		t.Fatalf("Next returned %v, want the feed's end", err)
	}
	_ = src.Close()
	select {
	case err := <-cg.Errors():
		var pe *PartitionError
		var fb *FetchFallbackError
		switch {
		case !errors.As(err, &pe) || pe.Topic != "t" || pe.Partition != 0:
			t.Fatalf("Errors() got %T %v, want a *PartitionError for t/0", err, err)
		case !errors.As(err, &fb) || fb.Offset != 7:
			t.Fatalf("Errors() got %v, want a *FetchFallbackError at offset 7", err)
		case !errors.Is(err, sarama.ErrTopicAuthorizationFailed):
			t.Fatalf("Errors() got %v, which does not wrap the broker's error", err)
		}
	default:
		t.Fatal("nothing on Errors() after the feed handed the partition to sarama's partition consumer")
	}
}
