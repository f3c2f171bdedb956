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
