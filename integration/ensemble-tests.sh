#!/usr/bin/env bash
# ensemble-tests.sh: the fault tests that need a ZooKeeper ensemble. It
# starts a stack of three ZooKeeper servers (whose peer links the tests cut)
# and one Kafka broker, on ports of its own so it can run beside the
# single-server stack, runs the ensemble tests and the chaos test on it,
# and always stops it.
#
#   integration/ensemble-tests.sh [extra go test flags]
#
# Without the race detector: go-zookeeper v1.0.4 (the latest release) reads
# its last seen zxid while re-setting watches after a reconnect, unlocked,
# as its receive loop writes it (a known race, unfixed upstream). These
# tests reconnect clients hundreds of times, so the detector reports that
# race and fails them. The code under test runs under -race in the main
# suite, and ENSEMBLE_RACE=1 restores -race here.
#
# Settings: ENSEMBLE_ZK_PORT (2281), ENSEMBLE_KAFKA_PORT (9192),
# ENSEMBLE_STACK_DIR (integration/.stack-ensemble); STACK_CACHE as for
# stack.sh.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

export ZK_NODES=3
export ZK_PORT="${ENSEMBLE_ZK_PORT:-2281}"
export KAFKA_PORT="${ENSEMBLE_KAFKA_PORT:-9192}"
export STACK_DIR="${ENSEMBLE_STACK_DIR:-$PWD/integration/.stack-ensemble}"

source integration/own-stack.sh
export ZK_ADDR KAFKA_ADDRS
race=()
[[ "${ENSEMBLE_RACE:-0}" == 1 ]] && race=(-race)
go test "${race[@]}" -count=1 -timeout 10m -run 'TestIntegrationEnsemble|TestIntegrationChaos' "$@" ./integration/ || status=1
