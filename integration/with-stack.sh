#!/usr/bin/env bash
# with-stack.sh: run a command with the local stack up, starting only what
# is not running and stopping, when the command ends, only what it started.
#
#   integration/with-stack.sh COMMAND [ARGS...]
#
# - The stack runs already (integration/stack.sh status succeeds): the
#   command uses it; nothing is started or stopped.
# - Nothing of it runs, but ZooKeeper and Kafka answer on their ports
#   (docker-compose, or a stack started from another checkout): the command
#   uses them; nothing is started or stopped.
# - Otherwise `stack.sh up` starts what is missing, and on exit (normal,
#   failure, Ctrl-C or SIGTERM) what it started is stopped: the whole stack,
#   data included, when nothing ran before; only the missing servers when
#   part of it ran.
#
# The command gets ZK_ADDR and KAFKA_ADDRS, which the integration tests and
# the demo read. Its exit status is the script's. When the command fails
# (and was not interrupted) and this script started the stack, the stack's
# logs are printed before it is stopped. Settings are stack.sh's (ZK_PORT, KAFKA_PORT, STACK_DIR,
# STACK_CACHE, ...).
set -uo pipefail
(($#)) || {
	echo "usage: integration/with-stack.sh COMMAND [ARGS...]" >&2
	exit 2
}
stack="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/stack.sh"
log() { printf '[with-stack] %s\n' "$*" >&2; }

port_open() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

# running NAME: NAME's status line says running.
running() { grep -q "^$1 .* running" <<<"$before"; }

before="$("$stack" status 2>/dev/null)"
started=none # none, all, or a list of servers to stop
if "$stack" status >/dev/null 2>&1; then
	log "using the running stack"
elif ! grep -q ' running' <<<"$before" && port_open "${ZK_PORT:-2181}" && port_open "${KAFKA_PORT:-9092}"; then
	log "using ZooKeeper and Kafka already listening on ${ZK_PORT:-2181} and ${KAFKA_PORT:-9092}"
else
	if grep -q ' running' <<<"$before"; then
		started=""
		running zookeeper || started+=" zookeeper"
		for name in $(awk '$1 ~ /^kafka-/ {print $1}' <<<"$before"); do
			running "$name" || started+=" $name"
		done
	else
		started=all
	fi
fi

status=0
stop() {
	trap - EXIT INT TERM
	if [[ "$started" != none ]] && ((status != 0 && status != 130 && status != 143)); then
		STACK_LOG_LINES=100 "$stack" logs
	fi
	case "$started" in
	none) ;;
	all) "$stack" down || status=1 ;;
	*)
		log "stopping what this run started:$started"
		for name in $started; do
			case "$name" in
			zookeeper) ;;
			kafka-*) "$stack" stop-broker "${name#kafka-}" || status=1 ;;
			esac
		done
		if [[ "$started" == *zookeeper* ]]; then "$stack" stop-zk || status=1; fi
		;;
	esac
	exit "$status"
}
trap stop EXIT
trap 'status=130; exit' INT
trap 'status=143; exit' TERM

if [[ "$started" != none ]]; then
	"$stack" up || {
		status=1
		exit
	}
fi
eval "$("$stack" env)"
export ZK_ADDR KAFKA_ADDRS
"$@" || status=$?
