package fetch

import "github.com/IBM/sarama"

// fetchVersion is the Fetch request version the round fetchers send for a
// cluster of version v: the one sarama's own partition consumer sends
// (v12 from Kafka 2.7, v11 from 2.3, v10 from 2.1, ...), never below v5,
// the first with record batches and the log start offset. sarama's broker
// lowers it further to what the broker's ApiVersions answer allows. See
// docs/batch-feed.md, "Protocol version".
func fetchVersion(v sarama.KafkaVersion) int16 {
	switch {
	case v.IsAtLeast(sarama.V2_7_0_0):
		return 12 // flexible: a null records field decodes (an errored partition)
	case v.IsAtLeast(sarama.V2_3_0_0):
		return 11
	case v.IsAtLeast(sarama.V2_1_0_0):
		return 10 // zstd
	case v.IsAtLeast(sarama.V2_0_0_0):
		return 8
	case v.IsAtLeast(sarama.V1_1_0_0):
		return 7
	case v.IsAtLeast(sarama.V1_0_0_0):
		return 6
	default:
		return 5
	}
}

// newFetchRequest returns an empty Fetch request for conf's cluster
// version: read uncommitted, no fetch session (KIP-227: session 0, epoch
// -1 asks the broker for none), and no rack (direct fetches apply without
// one, see directFetchApplies).
func newFetchRequest(conf *sarama.Config) *sarama.FetchRequest {
	req := &sarama.FetchRequest{
		Version:   fetchVersion(conf.Version),
		MinBytes:  1,
		MaxBytes:  conf.Consumer.Fetch.MaxBytes,
		Isolation: sarama.ReadUncommitted,
	}
	if req.Version >= 7 {
		req.SessionID, req.SessionEpoch = 0, -1
	}
	return req
}
