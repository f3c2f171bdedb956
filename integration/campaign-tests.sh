#!/usr/bin/env bash
# campaign-tests.sh: a short fault campaign (integration/cmd/campaign) on a
# stack of its own: three ZooKeeper servers and three brokers, on ports
# apart from the shared stack's, so it can run beside it. It runs
# TestIntegrationCampaignShort (three seeds of 15 s, between them every
# fault kind but sigstop) and always stops the stack.
#
#   integration/campaign-tests.sh [extra go test flags]
#
# Settings: CAMPAIGN_ZK_PORT (2881), CAMPAIGN_KAFKA_PORT (9792),
# CAMPAIGN_STACK_DIR (integration/.stack-campaign-tests), CAMPAIGN_SEEDS
# (12,25,29); STACK_CACHE as for stack.sh. Without -race, for the reason
# ensemble-tests.sh gives (go-zookeeper's reconnect race).
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

export ZK_NODES=3 KAFKA_BROKERS=3
export ZK_PORT="${CAMPAIGN_ZK_PORT:-2881}"
export KAFKA_PORT="${CAMPAIGN_KAFKA_PORT:-9792}"
export STACK_DIR="${CAMPAIGN_STACK_DIR:-$PWD/integration/.stack-campaign-tests}"
export STACK_TOPICS="zkgroup.test.single:1"

source integration/own-stack.sh
export ZK_ADDR KAFKA_ADDRS ZKGROUP_CAMPAIGN=1
go test -count=1 -timeout 20m -v -run TestIntegrationCampaignShort "$@" ./integration/cmd/campaign/ || status=1
