package benchstack

import (
	"time"

	"github.com/IBM/sarama"

	"github.com/zkgroup/kafka/consumergroup"
)

// FetchWait is the longest a fetch waits for data, for the groups both
// commands run (sarama's default is 500 ms, franz-go's 5 s): it only
// matters once a partition is read to its end.
const FetchWait = 100 * time.Millisecond

// OurGroupConfig is our groups' config in both commands, the library's
// integration tests' testConfig: from the oldest offset, commits every
// 100 ms, ProcessingTimeout 5 s, fetches waiting FetchWait at most.
func OurGroupConfig() *consumergroup.Config {
	cfg := consumergroup.NewConfig()
	cfg.Version = sarama.V2_8_0_0
	cfg.Offsets.Initial = sarama.OffsetOldest
	cfg.Offsets.ProcessingTimeout = 5 * time.Second
	cfg.Offsets.CommitInterval = 100 * time.Millisecond
	cfg.Consumer.MaxWaitTime = FetchWait
	return cfg
}
