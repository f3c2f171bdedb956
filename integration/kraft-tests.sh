#!/usr/bin/env bash
# kraft-tests.sh: the tests that need Kafka in KRaft mode. It starts a stack
# of a Kafka 4.x node in KRaft mode and a ZooKeeper 3.9 that serves only the
# consumer groups (integration/stack.sh with KAFKA_MODE=kraft), on ports of
# its own so it can run beside the ZooKeeper-mode stack, runs the KRaft
# tests on it (the groups read brokers, partitions and leaders from Kafka:
# Kafka.Brokers), and always stops it.
#
#   integration/kraft-tests.sh [extra go test flags]
#
# Settings: KRAFT_ZK_PORT (2981), KRAFT_KAFKA_PORT (9892; its controller
# listens on KRAFT_KAFKA_PORT+100), KRAFT_STACK_DIR
# (integration/.stack-kraft); STACK_CACHE as for stack.sh (the KRaft jars
# go to STACK_CACHE/lib-kraft and lib-zookeeper).
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.." || exit

export KAFKA_MODE=kraft
export ZK_NODES=1 KAFKA_BROKERS=1
export ZK_PORT="${KRAFT_ZK_PORT:-2981}"
export KAFKA_PORT="${KRAFT_KAFKA_PORT:-9892}"
export KAFKA_CONTROLLER_PORT=$((KAFKA_PORT + 100))
export STACK_DIR="${KRAFT_STACK_DIR:-$PWD/integration/.stack-kraft}"

source integration/own-stack.sh
export ZK_ADDR KAFKA_ADDRS KAFKA_MODE
go test -race -count=1 -timeout 15m -run 'TestIntegrationKRaft|TestIntegrationMetadata' "$@" ./integration/ || status=1
