// Package testenv locates the local test stack (integration/stack.sh) for
// integration tests and gives them names that do not collide.
//
// Integration tests are named TestIntegration* and call Integration(t)
// first: under -short they are skipped with a message saying why.
package testenv

import (
	"crypto/rand"
	"encoding/hex"
	"os"
	"strings"
	"testing"
)

// ZKAddr is the ZooKeeper address of the local stack: $ZK_ADDR, default
// "127.0.0.1:2181".
func ZKAddr() string { return getenv("ZK_ADDR", "127.0.0.1:2181") }

// KafkaAddrs are the broker addresses of the local stack: $KAFKA_ADDRS
// (comma-separated), default "127.0.0.1:9092".
func KafkaAddrs() []string { return strings.Split(getenv("KAFKA_ADDRS", "127.0.0.1:9092"), ",") }

// KRaft reports whether the stack runs Kafka in KRaft mode ($KAFKA_MODE is
// "kraft", as `integration/stack.sh env` prints it): the brokers are then
// registered nowhere in ZooKeeper, and groups must read metadata from
// KafkaAddrs.
func KRaft() bool { return os.Getenv("KAFKA_MODE") == "kraft" }

// KRaftIntegration skips t under -short, and unless the stack runs Kafka in
// KRaft mode, naming the stack it needs.
func KRaftIntegration(t testing.TB) {
	t.Helper()
	Integration(t)
	if !KRaft() {
		t.Skip("KRaft integration test: needs the stack in KRaft mode (integration/kraft-tests.sh, or KAFKA_MODE=kraft integration/stack.sh up and its env); KAFKA_MODE is not kraft")
	}
}

// Integration skips t under -short, naming the stack it would need.
func Integration(t testing.TB) {
	t.Helper()
	if testing.Short() {
		t.Skip("integration test: needs the local stack (integration/stack.sh up); skipped under -short")
	}
}

// UniqueName returns prefix followed by a random suffix, for groups and
// topics that no other test (or earlier run) uses.
func UniqueName(prefix string) string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return prefix + "-" + hex.EncodeToString(b[:])
}

func getenv(k, def string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return def
}
