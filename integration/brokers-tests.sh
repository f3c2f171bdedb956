#!/usr/bin/env bash
# brokers-tests.sh: the tests that need three Kafka brokers (leader moves,
# unclean leader elections), on a stack of their own: one ZooKeeper server
# and three brokers in ZooKeeper mode, on ports apart from the default
# stack's, so both can run side by side. It starts the stack, runs
# TestIntegrationBrokers* in ./integration/ and ./internal/..., and stops
# the stack again. Extra arguments go to `go test` (e.g. -run, -v).
#
# Settings: BROKERS_ZK_PORT (2381), BROKERS_KAFKA_PORT (9292),
# BROKERS_STACK_DIR (integration/.stack-brokers), BROKERS_RACE=1 (-race).
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

export ZK_NODES=1 KAFKA_BROKERS=3
export ZK_PORT="${BROKERS_ZK_PORT:-2381}"
export KAFKA_PORT="${BROKERS_KAFKA_PORT:-9292}"
export STACK_DIR="${BROKERS_STACK_DIR:-$PWD/integration/.stack-brokers}"

source integration/own-stack.sh
# STACK_DIR, ZK_PORT and KAFKA_PORT let tests call stack.sh stop-broker N /
# start-broker N on this stack.
export ZK_ADDR KAFKA_ADDRS STACK_DIR ZK_PORT KAFKA_PORT ZK_NODES KAFKA_BROKERS
race=()
[[ "${BROKERS_RACE:-0}" == 1 ]] && race=(-race)
go test "${race[@]}" -count=1 -timeout 10m -run 'TestIntegrationBrokers' "$@" ./integration/ ./internal/... || status=1
