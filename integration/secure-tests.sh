#!/usr/bin/env bash
# secure-tests.sh: the tests of the secure mode. It starts the stack in
# secure mode (STACK_SECURE=1: ZooKeeper with a TLS client port, Kafka with
# a SASL_SSL listener and a SCRAM user, certificates made at start-up) on
# ports of its own, so it can run beside the plain stack, runs the secure
# tests and the TLS-versus-plaintext benchmark, and always stops it.
#
#   integration/secure-tests.sh [extra go test flags]
#
# Settings: SECURE_ZK_PORT (2481; TLS on +100), SECURE_KAFKA_PORT (9392;
# SASL_SSL on +100), SECURE_STACK_DIR (integration/.stack-secure),
# SECURE_BENCH_MESSAGES (100000; 0 skips the benchmark); STACK_CACHE as
# for stack.sh.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

export STACK_SECURE=1 KAFKA_BROKERS=1 ZK_NODES=1
export ZK_PORT="${SECURE_ZK_PORT:-2481}"
export KAFKA_PORT="${SECURE_KAFKA_PORT:-9392}"
export STACK_DIR="${SECURE_STACK_DIR:-$PWD/integration/.stack-secure}"
bench="${SECURE_BENCH_MESSAGES:-100000}"

source integration/own-stack.sh
export ZK_ADDR KAFKA_ADDRS ZK_TLS_ADDR KAFKA_SSL_ADDRS SECURE_DIR SCRAM_USER
go test -race -count=1 -timeout 10m -run 'TestIntegrationSecure' "$@" ./integration/ || status=1
if ((bench > 0)); then
	ZKGROUP_BENCH_MESSAGES="$bench" go test -count=1 -timeout 10m -run NONE \
		-bench 'IntegrationSecureThroughput' -benchtime 2x ./integration/ || status=1
fi
