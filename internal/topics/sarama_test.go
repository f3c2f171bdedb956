package topics

import (
	"slices"
	"testing"

	"github.com/IBM/sarama"
)

// TestSaramaMetadataNeverCreatesTopics: the real fetcher sends one metadata
// request per fetch, for the subscribed topics, with automatic topic
// creation off, whatever the group's sarama config says.
func TestSaramaMetadataNeverCreatesTopics(t *testing.T) {
	broker := sarama.NewMockBroker(t, 1)
	defer broker.Close()
	broker.SetHandlerByMap(map[string]sarama.MockResponse{
		"MetadataRequest": sarama.NewMockMetadataResponse(t).
			SetBroker(broker.Addr(), broker.BrokerID()).
			SetLeader("a", 0, broker.BrokerID()).
			SetLeader("a", 1, broker.BrokerID()),
	})
	conf := sarama.NewConfig()
	conf.Version = sarama.V2_8_0_0
	conf.ApiVersionsRequest = false             // the mock broker does not answer it
	conf.Metadata.AllowAutoTopicCreation = true // sarama's default, unchanged
	meta, err := NewSaramaMetadata([]string{broker.Addr()}, conf)
	if err != nil {
		t.Fatal(err)
	}
	defer meta.Close()
	if !conf.Metadata.AllowAutoTopicCreation {
		t.Fatal("the group's sarama config must not be changed")
	}
	before := len(broker.History())
	resp, err := meta.Fetch([]string{"a"})
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 2 {
		t.Fatalf("answer %+v", resp.Topics)
	}
	var reqs []*sarama.MetadataRequest
	for _, r := range broker.History()[before:] {
		m, ok := r.Request.(*sarama.MetadataRequest)
		if !ok {
			t.Fatalf("unexpected request %T", r.Request)
		}
		reqs = append(reqs, m)
	}
	if len(reqs) != 1 {
		t.Fatalf("%d metadata requests for one fetch, want 1", len(reqs))
	}
	if !slices.Equal(reqs[0].Topics, []string{"a"}) || reqs[0].AllowAutoTopicCreation {
		t.Fatalf("request %+v: want topics [a] with AllowAutoTopicCreation false", reqs[0])
	}
}
