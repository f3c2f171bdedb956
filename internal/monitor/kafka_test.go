package monitor

import (
	"context"
	"errors"
	"io"
	"maps"
	"net"
	"testing"
	"time"

	"github.com/IBM/sarama"
)

// mockCluster is one sarama MockBroker leading partitions 0 and 1 of
// topic t, whose latest offsets are 42 and 7 (partition 2 answers
// NotLeaderForPartition), and a client of it.
func mockCluster(t *testing.T) (*sarama.MockBroker, sarama.Client) {
	t.Helper()
	conf := sarama.NewConfig()
	conf.Version = sarama.V2_1_0_0
	offsets := &sarama.OffsetResponse{Version: sarama.NewOffsetRequest(conf.Version).Version}
	offsets.AddTopicPartition("t", 0, 42)
	offsets.AddTopicPartition("t", 1, 7)
	offsets.AddTopicPartition("t", 2, 3)
	offsets.Blocks["t"][2].Err = sarama.ErrNotLeaderForPartition
	mb := sarama.NewMockBroker(t, 1)
	t.Cleanup(mb.Close)
	mb.SetHandlerByMap(map[string]sarama.MockResponse{
		"MetadataRequest": sarama.NewMockMetadataResponse(t).
			SetBroker(mb.Addr(), mb.BrokerID()).
			SetLeader("t", 0, mb.BrokerID()).
			SetLeader("t", 1, mb.BrokerID()),
		"OffsetRequest": sarama.NewMockWrapper(offsets),
	})
	conf.ApiVersionsRequest = false
	conf.Metadata.Retry.Max = 0
	client, err := sarama.NewClient([]string{mb.Addr()}, conf)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = client.Close() })
	return mb, client
}

// Kafka finds the leaders the client knows and asks them over a
// connection of its own, one request for all their partitions.
func TestKafkaAsksLeaders(t *testing.T) {
	mb, client := mockCluster(t)
	k := NewKafka(client)
	defer k.Close()

	lookups, err := k.Leaders(t.Context(), []TopicPartition{tp(0), tp(1), {Topic: "missing"}})
	if err != nil {
		t.Fatal(err)
	}
	leader := Broker{ID: mb.BrokerID(), Addr: mb.Addr()}
	if lookups[0] != (Lookup{Leader: leader}) || lookups[1] != (Lookup{Leader: leader}) || lookups[2].Err == nil {
		t.Fatalf("lookups %+v, want partitions 0 and 1 led by %v, an error for the missing topic", lookups, leader)
	}
	hwms, err := k.HighWaterMarks(t.Context(), leader, []TopicPartition{tp(0), tp(1), tp(2)})
	if err != nil {
		t.Fatal(err)
	}
	if want := map[TopicPartition]int64{tp(0): 42, tp(1): 7}; !maps.Equal(hwms, want) {
		t.Errorf("high-water marks %v, want %v (partition 2 answered with an error)", hwms, want)
	}
	if len(k.conns) != 1 {
		t.Errorf("%d own connections, want 1", len(k.conns))
	}
	k.Close() // as the round ends
	if len(k.conns) != 0 {
		t.Errorf("%d own connections after Close, want 0", len(k.conns))
	}
}

// A ListOffsets request to a broker that never answers is cancelled with
// its context: it returns the context's error at once, long before the
// read timeout, and leaves nothing running (TestMain checks).
func TestKafkaCancelsRequestInFlight(t *testing.T) {
	_, client := mockCluster(t)
	client.Config().Net.ReadTimeout = time.Hour
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	asked := make(chan struct{})
	go holdAnswers(ln, asked) // a broker that reads requests and never answers

	k := NewKafka(client)
	defer k.Close()
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() {
		_, err := k.HighWaterMarks(ctx, Broker{ID: 9, Addr: ln.Addr().String()}, []TopicPartition{tp(0)})
		done <- err
	}()
	<-asked
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("cancelled request returned %v, want context.Canceled", err)
		}
	case <-time.After(time.Minute): // a hang guard, not a measure of speed
		t.Fatal("a cancelled ListOffsets request is still waiting for the broker")
	}
	if len(k.conns) != 0 {
		t.Errorf("%d own connections after a cancelled request, want 0", len(k.conns))
	}
}

// holdAnswers accepts connections on ln and reads them without ever
// answering; asked is closed when the first bytes of a request arrive.
func holdAnswers(ln net.Listener, asked chan struct{}) {
	first := true
	for {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		var b [1]byte
		if _, err := c.Read(b[:]); err == nil && first {
			first = false
			close(asked)
		}
		go func() { _, _ = io.Copy(io.Discard, c); _ = c.Close() }()
	}
}
