// Package benchstack is what the bench commands (cmd/throughput,
// cmd/rolling) share about the stack they run against: its addresses, read
// from ZK_ADDR and KAFKA_ADDRS as the library's integration tests read
// them, the topics they create and delete, our groups' config, and their
// integration tests' preamble (skip without the stack, build the command).
package benchstack

import (
	"os"
	"strings"

	"github.com/zkgroup/kafka/internal/testenv"
)

// Stack is where a command's groups and producers connect.
type Stack struct {
	ZK      string   // the ZooKeeper connection string
	Brokers []string // the Kafka brokers' addresses
}

// FromEnv is the stack ZK_ADDR and KAFKA_ADDRS (comma-separated) name,
// "127.0.0.1:2181" and "127.0.0.1:9092" by default.
func FromEnv() Stack {
	return Stack{ZK: testenv.ZKAddr(), Brokers: testenv.KafkaAddrs()}
}

// Environ is this process's environment with ZK_ADDR and KAFKA_ADDRS
// naming s, for a child process that reads its stack with FromEnv.
func (s Stack) Environ() []string {
	return append(os.Environ(), "ZK_ADDR="+s.ZK, "KAFKA_ADDRS="+strings.Join(s.Brokers, ","))
}
