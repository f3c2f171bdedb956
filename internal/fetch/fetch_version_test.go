package fetch

import (
	"context"
	"testing"

	"github.com/IBM/sarama"
)

// Rounds are sent at the Fetch version sarama's own consumer sends for the
// configured cluster version: v12 for Kafka 2.7 and later (zstd decodes
// from v10; v12's flexible records field decodes the null records of an
// errored partition), and never below v5.
func TestFetcherSendsVersionOfClusterVersion(t *testing.T) {
	for _, tc := range []struct {
		version sarama.KafkaVersion
		want    int16
	}{
		{sarama.V0_11_0_0, 5}, {sarama.V2_0_0_0, 8}, {sarama.V2_1_0_0, 10},
		{sarama.V2_3_0_0, 11}, {sarama.V2_8_0_0, 12}, {sarama.V3_9_0_0, 12},
	} {
		t.Run(tc.version.String(), func(t *testing.T) {
			broker := sarama.NewMockBroker(t, 1)
			defer broker.Close()
			res := &sarama.FetchResponse{Version: tc.want} // the mock answers as it is told
			res.AddRecord("t", 0, nil, sarama.StringEncoder("m"), 0)
			res.GetBlock("t", 0).HighWaterMarkOffset = 1
			broker.SetHandlerByMap(map[string]sarama.MockResponse{
				"MetadataRequest": sarama.NewMockMetadataResponse(t).
					SetBroker(broker.Addr(), broker.BrokerID()).SetLeader("t", 0, broker.BrokerID()),
				"FetchRequest": sarama.NewMockWrapper(res),
			})
			e := mockFetchGroup(t, broker)
			e.config.Version = tc.version
			f := newRoundFetcher(e)
			if r := f.fetchUpTo(context.Background(), "t", 0, 0, 10); r.err != nil {
				t.Fatalf("fetch: %v", r.err)
			}
			for _, rr := range broker.History() {
				if req, ok := rr.Request.(*sarama.FetchRequest); ok && req.Version != tc.want {
					t.Fatalf("Fetch v%d sent for Kafka %s, want v%d", req.Version, tc.version, tc.want)
				}
			}
		})
	}
}
