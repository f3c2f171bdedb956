// Package integration holds the tests that run against the real stack: a
// ZooKeeper server and Apache Kafka broker(s) in ZooKeeper mode, started as
// local processes by stack.sh (see its header for the settings).
//
//	integration/stack.sh up
//	go test -race ./integration/
//	integration/stack.sh down
//
// Every test here is named TestIntegration* and is skipped under -short.
package integration
