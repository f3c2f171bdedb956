package consumergroup

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/IBM/sarama"
)

type countInterceptor struct{ n atomic.Int32 }

func (c *countInterceptor) OnConsume(*sarama.ConsumerMessage) { c.n.Add(1) }

// The group's sarama consumer runs no interceptors: the worker runs them
// once per message it hands out, and sarama's partition consumer would
// run them again on every message it reads, the ones a seek or a close
// drops from its buffer among them. Before, it ran them (count 1 here).
func TestSaramaConsumerRunsNoInterceptors(t *testing.T) {
	broker := sarama.NewMockBroker(t, 1)
	defer broker.Close()
	res := &sarama.FetchResponse{Version: 5}
	res.AddRecord("t", 0, nil, sarama.StringEncoder("m"), 0)
	res.GetBlock("t", 0).HighWaterMarkOffset = 1
	broker.SetHandlerByMap(map[string]sarama.MockResponse{
		"MetadataRequest": sarama.NewMockMetadataResponse(t).
			SetBroker(broker.Addr(), broker.BrokerID()).
			SetLeader("t", 0, broker.BrokerID()),
		"OffsetRequest": sarama.NewMockOffsetResponse(t).
			SetOffset("t", 0, sarama.OffsetOldest, 0).
			SetOffset("t", 0, sarama.OffsetNewest, 1),
		"FetchRequest": sarama.NewMockWrapper(res),
	})
	ic := &countInterceptor{}
	conf := sarama.NewConfig()
	conf.Version = sarama.V0_11_0_0 // sarama's fetches are version 5, as the mock's answer
	conf.ApiVersionsRequest = false // the mock broker does not answer it
	conf.Metadata.Retry.Max = 0
	conf.Consumer.Interceptors = []sarama.ConsumerInterceptor{ic}
	client, err := sarama.NewClient([]string{broker.Addr()}, conf)
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	consumer, err := newSaramaConsumer(client)
	if err != nil {
		t.Fatal(err)
	}
	defer consumer.Close()
	pc, err := consumer.ConsumePartition("t", 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer pc.Close()
	select {
	case <-pc.Messages():
	case <-time.After(5 * time.Second):
		t.Fatal("no message")
	}
	if n := ic.n.Load(); n != 0 {
		t.Fatalf("sarama's partition consumer ran the interceptor %d times", n)
	}
	if len(client.Config().Consumer.Interceptors) != 1 {
		t.Fatal("the client's config lost its interceptors")
	}
}
