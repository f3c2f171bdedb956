#!/usr/bin/env bash
# stack.sh: the local test stack, a real ZooKeeper and real Apache Kafka
# broker(s) in ZooKeeper mode, as plain processes on 127.0.0.1.
#
#   integration/stack.sh up        download jars if needed, start ZooKeeper and
#                                  the broker(s), wait until ready, create topics
#   integration/stack.sh down      stop exactly the processes `up` started (by pid)
#   integration/stack.sh status    show what runs, where, and its pid
#   integration/stack.sh logs      print the tail of every log (for failing CI)
#   integration/stack.sh env       print the settings as shell assignments
#
# Fault tests also use:
#   integration/stack.sh stop-zk | start-zk
#   integration/stack.sh stop-broker N | start-broker N | kill-broker N
#
# Settings (environment variables, with defaults):
#   STACK_DIR        integration/.stack  data, logs and pid files (git-ignored)
#   STACK_CACHE      integration/.cache  the jars from Maven Central (git-ignored)
#   ZK_PORT          2181                ZooKeeper client port
#   KAFKA_PORT       9092                port of broker 1; broker N uses KAFKA_PORT+N-1
#   KAFKA_BROKERS    1                   number of brokers (3 for fault tests)
#   KAFKA_HEAP       512m                -Xmx of each broker
#   STACK_TOPICS     "zkgroup.test.single:1 zkgroup.test.four:4 zkgroup.test.sixtyfour:64"
#                                        topics created by `up`, as name:partitions
#   STACK_TIMEOUT    120                 seconds `up` waits for readiness
#   STACK_MVN_ARGS   ""                  extra mvn arguments (e.g. -Dmaven.repo.local=DIR)
#   STACK_KEEP_DATA  0                   1: `down` keeps the data folders
#
# A second `up` while the stack runs starts nothing new and only re-checks
# readiness. Every log stays in $STACK_DIR/logs.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
STACK_DIR="${STACK_DIR:-$ROOT/integration/.stack}"
STACK_CACHE="${STACK_CACHE:-$ROOT/integration/.cache}"
ZK_PORT="${ZK_PORT:-2181}"
KAFKA_PORT="${KAFKA_PORT:-9092}"
KAFKA_BROKERS="${KAFKA_BROKERS:-1}"
KAFKA_HEAP="${KAFKA_HEAP:-512m}"
STACK_TOPICS="${STACK_TOPICS:-zkgroup.test.single:1 zkgroup.test.four:4 zkgroup.test.sixtyfour:64}"
STACK_TIMEOUT="${STACK_TIMEOUT:-120}"

LIB="$STACK_CACHE/lib"
LOGS="$STACK_DIR/logs"
PIDS="$STACK_DIR/pids"
CONF="$STACK_DIR/conf"

log() { printf '[stack %s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
die() { log "error: $*"; exit 1; }

broker_port() { echo $((KAFKA_PORT + $1 - 1)); }
broker_addrs() {
	local i out=""
	for ((i = 1; i <= KAFKA_BROKERS; i++)); do out+="${out:+,}127.0.0.1:$(broker_port "$i")"; done
	echo "$out"
}

# fetch_jars resolves Kafka and its dependencies (ZooKeeper included) from
# Maven Central into $LIB, once.
fetch_jars() {
	if [[ -f "$LIB/.complete" ]]; then return; fi
	command -v mvn >/dev/null || die "mvn not found (apt-get install maven)"
	log "resolving Kafka jars from Maven Central into $LIB"
	rm -rf "$LIB"
	mkdir -p "$LIB"
	# shellcheck disable=SC2086 # STACK_MVN_ARGS is a list of arguments
	mvn -q -B ${STACK_MVN_ARGS:-} -f "$ROOT/integration/stack/pom.xml" dependency:copy-dependencies \
		-DoutputDirectory="$LIB" -DincludeScope=runtime >"$STACK_CACHE/mvn.log" 2>&1 ||
		{ cat "$STACK_CACHE/mvn.log" >&2; die "mvn could not resolve the Kafka artifacts"; }
	ls "$LIB"/kafka_2.13-*.jar "$LIB"/zookeeper-3.*.jar >/dev/null || die "jars missing after mvn"
	touch "$LIB/.complete"
}

# alive NAME: true when the pid recorded for NAME runs and is still our java.
alive() {
	local f="$PIDS/$1.pid" pid
	[[ -f "$f" ]] || return 1
	pid="$(cat "$f")"
	[[ -n "$pid" ]] && kill -0 "$pid" 2>/dev/null || return 1
	# Guard against a recycled pid: the process must be the one we started.
	tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -q -- "-Dzkgroup.stack=$1" || return 1
}

port_open() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

# zk4 CMD: send a ZooKeeper four-letter command and print the answer.
zk4() {
	local out
	exec 3<>"/dev/tcp/127.0.0.1/$ZK_PORT" || return 1
	printf '%s' "$1" >&3
	out="$(timeout 5 cat <&3)" || true
	exec 3<&- 3>&-
	printf '%s' "$out"
}

log4j_conf() {
	cat >"$CONF/log4j.properties" <<EOF
log4j.rootLogger=INFO, stdout
log4j.appender.stdout=org.apache.log4j.ConsoleAppender
log4j.appender.stdout.layout=org.apache.log4j.PatternLayout
log4j.appender.stdout.layout.ConversionPattern=[%d] %p %m (%c)%n
log4j.logger.kafka=INFO
log4j.logger.org.apache.kafka=INFO
log4j.logger.org.apache.zookeeper=INFO
log4j.logger.state.change.logger=WARN
log4j.logger.kafka.request.logger=WARN
EOF
}

# spawn NAME HEAP MAINCLASS ARGS...: start a JVM in the background, detached
# from this shell, with its output in $LOGS/NAME.log and its pid in $PIDS.
spawn() {
	local name="$1" heap="$2"
	shift 2
	mkdir -p "$LOGS" "$PIDS"
	setsid nohup java -Xms64m -Xmx"$heap" -XX:+UseSerialGC -XX:TieredStopAtLevel=1 \
		-Djava.awt.headless=true -Dzkgroup.stack="$name" \
		-Dlog4j.configuration="file:$CONF/log4j.properties" \
		-Dkafka.logs.dir="$LOGS" \
		-cp "$LIB/*" "$@" >>"$LOGS/$name.log" 2>&1 </dev/null &
	echo $! >"$PIDS/$name.pid"
}

start_zk() {
	if alive zookeeper; then return; fi
	port_open "$ZK_PORT" && die "port $ZK_PORT is taken by a process this script did not start"
	mkdir -p "$STACK_DIR/zookeeper" "$CONF"
	log4j_conf
	cat >"$CONF/zookeeper.properties" <<EOF
dataDir=$STACK_DIR/zookeeper
clientPort=$ZK_PORT
clientPortAddress=127.0.0.1
# tickTime 500 lets tests use session timeouts from 1 s (2 ticks) to 60 s.
tickTime=500
minSessionTimeout=1000
maxSessionTimeout=60000
maxClientCnxns=0
admin.enableServer=false
4lw.commands.whitelist=*
EOF
	log "starting ZooKeeper on 127.0.0.1:$ZK_PORT"
	spawn zookeeper 256m org.apache.zookeeper.server.quorum.QuorumPeerMain "$CONF/zookeeper.properties"
}

wait_zk() {
	local deadline=$((SECONDS + STACK_TIMEOUT))
	until [[ "$(zk4 ruok 2>/dev/null)" == imok ]]; do
		alive zookeeper || die "ZooKeeper exited; see $LOGS/zookeeper.log"
		((SECONDS < deadline)) || die "ZooKeeper not ready after ${STACK_TIMEOUT}s"
		sleep 0.2
	done
}

start_broker() {
	local id="$1" port
	port="$(broker_port "$id")"
	if alive "kafka-$id"; then return; fi
	port_open "$port" && die "port $port is taken by a process this script did not start"
	# After a kill, the dead broker's registration lives until its ZooKeeper
	# session times out; a broker started before that exits with NodeExists.
	local deadline=$((SECONDS + 30))
	while grep -q "/brokers/ids/$id\$" <<<"$(zk4 dump 2>/dev/null || true)"; do
		((SECONDS < deadline)) || die "broker $id is still registered in ZooKeeper after 30s"
		sleep 0.2
	done
	mkdir -p "$STACK_DIR/kafka-$id" "$CONF"
	log4j_conf
	local rf=$((KAFKA_BROKERS < 3 ? KAFKA_BROKERS : 3))
	cat >"$CONF/kafka-$id.properties" <<EOF
broker.id=$id
listeners=PLAINTEXT://127.0.0.1:$port
advertised.listeners=PLAINTEXT://127.0.0.1:$port
zookeeper.connect=127.0.0.1:$ZK_PORT
zookeeper.session.timeout.ms=6000
log.dirs=$STACK_DIR/kafka-$id
num.partitions=1
default.replication.factor=1
auto.create.topics.enable=true
delete.topic.enable=true
offsets.topic.replication.factor=$rf
offsets.topic.num.partitions=4
transaction.state.log.replication.factor=$rf
transaction.state.log.min.isr=1
group.initial.rebalance.delay.ms=0
log.flush.interval.messages=1000000
num.network.threads=2
num.io.threads=2
background.threads=2
num.recovery.threads.per.data.dir=1
log.cleaner.enable=false
EOF
	log "starting Kafka broker $id on 127.0.0.1:$port"
	spawn "kafka-$id" "$KAFKA_HEAP" kafka.Kafka "$CONF/kafka-$id.properties"
}

# wait_brokers: every broker registered under /brokers/ids (seen in the
# ephemeral-node dump) and its port accepting connections. The Go readiness
# check that follows proves the brokers answer metadata.
wait_brokers() {
	local deadline=$((SECONDS + STACK_TIMEOUT)) i ok dump
	while :; do
		ok=1
		dump="$(zk4 dump 2>/dev/null || true)"
		for ((i = 1; i <= KAFKA_BROKERS; i++)); do
			alive "kafka-$i" || die "broker $i exited; see $LOGS/kafka-$i.log"
			grep -q "/brokers/ids/$i\$" <<<"$dump" || ok=0
			port_open "$(broker_port "$i")" || ok=0
		done
		((ok)) && return
		((SECONDS < deadline)) || die "brokers not registered after ${STACK_TIMEOUT}s"
		sleep 0.2
	done
}

# ready: ask the brokers for metadata through sarama, via the Go helper, and
# create the test topics.
ready() {
	(cd "$ROOT" && go run ./integration/cmd/stackready \
		-zookeeper "127.0.0.1:$ZK_PORT" -brokers "$KAFKA_BROKERS" \
		-timeout "${STACK_TIMEOUT}s" $STACK_TOPICS)
}

stop_one() {
	local name="$1" sig="${2:-TERM}" pid i
	if ! alive "$name"; then
		rm -f "$PIDS/$name.pid"
		return
	fi
	pid="$(cat "$PIDS/$name.pid")"
	log "stopping $name (pid $pid, SIG$sig)"
	kill -"$sig" "$pid" 2>/dev/null || true
	for ((i = 0; i < 300; i++)); do
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.1
	done
	if kill -0 "$pid" 2>/dev/null; then
		log "$name did not stop in 30s; killing"
		kill -KILL "$pid" 2>/dev/null || true
		while kill -0 "$pid" 2>/dev/null; do sleep 0.1; done
	fi
	rm -f "$PIDS/$name.pid"
}

cmd_up() {
	local t0=$SECONDS i
	fetch_jars
	start_zk
	wait_zk
	for ((i = 1; i <= KAFKA_BROKERS; i++)); do start_broker "$i"; done
	wait_brokers
	ready
	log "stack ready in $((SECONDS - t0))s: zookeeper 127.0.0.1:$ZK_PORT, brokers $(broker_addrs)"
}

cmd_down() {
	local f name
	shopt -s nullglob
	# Brokers first, so they deregister cleanly while ZooKeeper still runs.
	for f in "$PIDS"/kafka-*.pid; do
		name="$(basename "$f" .pid)"
		stop_one "$name"
	done
	stop_one zookeeper
	if [[ "${STACK_KEEP_DATA:-0}" != 1 ]]; then
		rm -rf "$STACK_DIR/zookeeper" "$STACK_DIR"/kafka-*
	fi
	log "stack down"
}

cmd_status() {
	local f name rc=0
	shopt -s nullglob
	printf 'zookeeper 127.0.0.1:%s ' "$ZK_PORT"
	if alive zookeeper; then echo "running (pid $(cat "$PIDS/zookeeper.pid"))"; else echo "stopped"; rc=3; fi
	for ((i = 1; i <= KAFKA_BROKERS; i++)); do
		printf 'kafka-%s 127.0.0.1:%s ' "$i" "$(broker_port "$i")"
		if alive "kafka-$i"; then echo "running (pid $(cat "$PIDS/kafka-$i.pid"))"; else echo "stopped"; rc=3; fi
	done
	return $rc
}

cmd_logs() {
	local f
	shopt -s nullglob
	for f in "$LOGS"/*.log "$STACK_CACHE/mvn.log"; do
		echo "===== $f (last ${STACK_LOG_LINES:-200} lines) ====="
		tail -n "${STACK_LOG_LINES:-200}" "$f"
	done
}

cmd_env() {
	echo "ZK_ADDR=127.0.0.1:$ZK_PORT"
	echo "KAFKA_ADDRS=$(broker_addrs)"
	echo "STACK_DIR=$STACK_DIR"
}

case "${1:-}" in
up) cmd_up ;;
down) cmd_down ;;
status) cmd_status ;;
logs) cmd_logs ;;
env) cmd_env ;;
fetch) fetch_jars ;;
stop-zk) stop_one zookeeper ;;
start-zk) start_zk && wait_zk ;;
stop-broker) stop_one "kafka-${2:?broker id}" ;;
kill-broker) stop_one "kafka-${2:?broker id}" KILL ;;
start-broker) start_broker "${2:?broker id}" && wait_brokers ;;
*)
	sed -n '2,30p' "$0" | sed 's/^# \{0,1\}//'
	exit 2
	;;
esac
