#!/usr/bin/env bash
# stack.sh: the local test stack, a real ZooKeeper (one server, or an
# ensemble of three) and real Apache Kafka broker(s) in ZooKeeper mode, as
# plain processes on 127.0.0.1. With KAFKA_MODE=kraft: a Kafka 4.x node in
# KRaft mode (broker and controller in one process, no ZooKeeper) and a
# standalone ZooKeeper 3.9 that serves only the consumer groups.
#
#   integration/stack.sh up        download jars if needed, start ZooKeeper and
#                                  the broker(s), wait until ready, create topics
#   integration/stack.sh down      stop exactly the processes `up` started (by pid)
#   integration/stack.sh status    show what runs, where, and its pid
#   integration/stack.sh logs      print the tail of every log (for failing CI)
#   integration/stack.sh env       print the settings as shell assignments
#
# Fault tests also use:
#   integration/stack.sh stop-zk | start-zk        every ZooKeeper server
#   integration/stack.sh stop-broker N | start-broker N | kill-broker N
# and, with ZK_NODES=3 (servers numbered 1 to 3):
#   integration/stack.sh stop-zk N | kill-zk N     SIGTERM | SIGKILL server N
#   integration/stack.sh start-zk N                start N, wait until it serves
#   integration/stack.sh cut-zk N [silent|reset]   cut N off from its peers
#   integration/stack.sh heal-zk N                 reconnect N to its peers
#   integration/stack.sh zk-mode N                 leader, follower, not-serving
#                                                  or stopped
#   integration/stack.sh zk-leader                 id of the current leader
#
# Settings (environment variables, with defaults):
#   STACK_DIR        integration/.stack  data, logs and pid files (git-ignored)
#   STACK_CACHE      integration/.cache  the jars from Maven Central (git-ignored)
#   ZK_NODES         1                   ZooKeeper servers: 1, or 3 for an ensemble
#   ZK_PORT          2181                client port of server 1; server N uses
#                                        ZK_PORT+N-1
#   ZK_PEER_PORT     ZK_PORT+1000        first of the ensemble's peer ports
#                                        (ZK_PEER_PORT to ZK_PEER_PORT+23)
#   KAFKA_PORT       9092                port of broker 1; broker N uses KAFKA_PORT+N-1
#   KAFKA_BROKERS    1                   number of brokers (3 for fault tests)
#   KAFKA_HEAP       512m                -Xmx of each broker
#   STACK_JVM_OPTS   "-XX:+UseSerialGC -XX:TieredStopAtLevel=1"
#                                        JIT and GC options of every server's
#                                        JVM: the default starts fast and uses
#                                        little CPU on a small machine;
#                                        "-XX:+UseG1GC -XX:MaxGCPauseMillis=20"
#                                        runs them as Kafka's start scripts
#                                        do (the full JIT, G1)
#   STACK_TOPICS     "zkgroup.test.single:1 zkgroup.test.four:4 zkgroup.test.sixtyfour:64"
#                                        topics created by `up`, as name:partitions
#   STACK_TIMEOUT    120                 seconds `up` waits for readiness
#   STACK_MVN_ARGS   ""                  extra mvn arguments (e.g. -Dmaven.repo.local=DIR)
#   STACK_KEEP_DATA  0                   1: `down` keeps the data folders
#   STACK_SECURE     0                   1: the secure mode below
#   ZK_TLS_PORT      ZK_PORT+100         TLS client port of server 1 (secure mode);
#                                        server N uses ZK_TLS_PORT+N-1
#   KAFKA_SSL_PORT   KAFKA_PORT+100      SASL_SSL port of broker 1 (secure mode);
#                                        broker N uses KAFKA_SSL_PORT+N-1
#
# Secure mode (STACK_SECURE=1) adds, beside the plain ports, which stay for
# the brokers' own ZooKeeper sessions, monitoring and comparisons:
#   - a TLS client port on every ZooKeeper server (secureClientPort, Netty),
#     requiring a client certificate signed by the stack's CA;
#   - a SASL_SSL listener (TLS, SCRAM-SHA-512) on every broker, with one
#     SCRAM user, created in ZooKeeper before the brokers start;
#   - certificates (integration/cmd/seccerts) and a random SCRAM password, made at
#     the first `up` into $STACK_DIR/secure; `env` prints where they are.
# ZooKeeper's digest scheme needs no server setting: clients choose their
# credentials and the ACLs of the nodes they create.
#   KAFKA_MODE       zookeeper           zookeeper: Kafka 3.9 registered in
#                                        ZooKeeper (integration/stack/pom.xml);
#                                        kraft: Kafka 4.x in KRaft mode
#                                        (stack/pom-kraft.xml, jars in
#                                        STACK_CACHE/lib-kraft) beside ZooKeeper
#                                        3.9 (stack/pom-zookeeper.xml, jars in
#                                        STACK_CACHE/lib-zookeeper), which holds
#                                        no broker and no topic; one node, one
#                                        ZooKeeper server
#   KAFKA_CONTROLLER_PORT KAFKA_PORT+200 the KRaft controller listener (kraft)
#
# Every ZooKeeper server runs with tickTime 500 ms and session timeouts from
# 1 s to 60 s. The ensemble adds initLimit 10 (a follower has 5 s to sync
# with a new leader) and syncLimit 10: a follower that hears nothing from
# the leader for 10 ticks (5 s, longer than the 4 s session timeout the
# follower-cut test uses, as common production settings are) gives up, stops serving its clients and looks
# for a leader again; the leader likewise drops a follower silent for as
# long. Dynamic reconfiguration is off (reconfigEnabled=false, the default,
# written out), so every server keeps the peer addresses of its own
# configuration. Ensemble servers ask their peers for a leader at least
# every 2 s (ZooKeeper's default backs off to 60 s), so a healed server
# rejoins within about 2 s.
#
# Ensemble links: server i reaches server j (quorum and election port)
# through a loopback proxy of its own, run by integration/cmd/zkpeers; the
# client ports are not proxied. `cut-zk N` cuts every link from or to N:
# silent (the default) keeps the connections up but lets no byte through,
# like a real partition, so N notices only after syncLimit ticks; reset
# closes them, so N notices at once. Either way N's clients stay connected
# to N until N gives up on the leader, then N refuses them until healed.
# The brokers connect to servers 2 and 3 only, so server 1 is the one tests
# cut (while it is a follower) without disturbing Kafka.
#
# A second `up` while the stack runs starts nothing new and only re-checks
# readiness. Every log stays in $STACK_DIR/logs.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
STACK_DIR="${STACK_DIR:-$ROOT/integration/.stack}"
STACK_CACHE="${STACK_CACHE:-$ROOT/integration/.cache}"
ZK_NODES="${ZK_NODES:-1}"
ZK_PORT="${ZK_PORT:-2181}"
ZK_PEER_PORT="${ZK_PEER_PORT:-$((ZK_PORT + 1000))}"
KAFKA_PORT="${KAFKA_PORT:-9092}"
KAFKA_BROKERS="${KAFKA_BROKERS:-1}"
KAFKA_HEAP="${KAFKA_HEAP:-512m}"
STACK_JVM_OPTS="${STACK_JVM_OPTS:--XX:+UseSerialGC -XX:TieredStopAtLevel=1}"
STACK_TOPICS="${STACK_TOPICS:-zkgroup.test.single:1 zkgroup.test.four:4 zkgroup.test.sixtyfour:64}"
STACK_TIMEOUT="${STACK_TIMEOUT:-120}"
STACK_SECURE="${STACK_SECURE:-0}"
ZK_TLS_PORT="${ZK_TLS_PORT:-$((ZK_PORT + 100))}"
KAFKA_SSL_PORT="${KAFKA_SSL_PORT:-$((KAFKA_PORT + 100))}"
KAFKA_MODE="${KAFKA_MODE:-zookeeper}"
KAFKA_CONTROLLER_PORT="${KAFKA_CONTROLLER_PORT:-$((KAFKA_PORT + 200))}"

LIB="$STACK_CACHE/lib"
LIB_KRAFT="$STACK_CACHE/lib-kraft"
LIB_ZOOKEEPER="$STACK_CACHE/lib-zookeeper"
LOGS="$STACK_DIR/logs"
PIDS="$STACK_DIR/pids"
CONF="$STACK_DIR/conf"
CUTS="$STACK_DIR/zkpeers.cut"
APPLIED="$STACK_DIR/zkpeers.applied"

log() { printf '[stack %s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
die() { log "error: $*"; exit 1; }

[[ "$ZK_NODES" =~ ^[1-9]$ && "$ZK_NODES" != 2 ]] || die "ZK_NODES must be 1 or an ensemble size from 3 to 9, not '$ZK_NODES'"
[[ "$KAFKA_MODE" == zookeeper || "$KAFKA_MODE" == kraft ]] || die "KAFKA_MODE must be zookeeper or kraft, not '$KAFKA_MODE'"

ensemble() { ((ZK_NODES > 1)); }
kraft() { [[ "$KAFKA_MODE" == kraft ]]; }

if kraft; then
	((ZK_NODES == 1)) || die "KAFKA_MODE=kraft runs one ZooKeeper server (ZK_NODES=1)"
	((KAFKA_BROKERS == 1)) || die "KAFKA_MODE=kraft runs one Kafka node (KAFKA_BROKERS=1)"
fi

# The class path of ZooKeeper and of the brokers: one folder of jars for
# both in ZooKeeper mode, a folder each in KRaft mode.
zk_lib() { if kraft; then echo "$LIB_ZOOKEEPER"; else echo "$LIB"; fi; }
kafka_lib() { if kraft; then echo "$LIB_KRAFT"; else echo "$LIB"; fi; }

broker_port() { echo $((KAFKA_PORT + $1 - 1)); }
broker_addrs() {
	local i out=""
	for ((i = 1; i <= KAFKA_BROKERS; i++)); do out+="${out:+,}127.0.0.1:$(broker_port "$i")"; done
	echo "$out"
}

# ZooKeeper servers are numbered 1..ZK_NODES. The single server keeps the
# name it always had, so an existing stack's pid file stays valid.
zk_name() { if ensemble; then echo "zookeeper-$1"; else echo zookeeper; fi; }
zk_port() { echo $((ZK_PORT + $1 - 1)); }
zk_addrs() {
	local i out=""
	for ((i = 1; i <= ZK_NODES; i++)); do out+="${out:+,}127.0.0.1:$(zk_port "$i")"; done
	echo "$out"
}
# The brokers' connection string: in an ensemble, every server but 1, so
# that cutting server 1 never touches Kafka's own sessions.
broker_zk_connect() {
	local i out=""
	if ! ensemble; then echo "127.0.0.1:$ZK_PORT" && return; fi
	for ((i = 2; i <= ZK_NODES; i++)); do out+="${out:+,}127.0.0.1:$(zk_port "$i")"; done
	echo "$out"
}

# Peer ports, from ZK_PEER_PORT (P) and n = ZK_NODES: server j listens for
# its peers on quorum port P+2(j-1) and election port P+2(j-1)+1; the proxy
# of link i->j listens on P+2n+2((i-1)n+j-1) (quorum) and the next port
# (election).
peer_real() { echo $((ZK_PEER_PORT + 2 * ($1 - 1))); }
peer_proxy() { echo $((ZK_PEER_PORT + 2 * ZK_NODES + 2 * (($1 - 1) * ZK_NODES + $2 - 1))); }

need_id() {
	ensemble || die "$1 needs an ensemble (ZK_NODES=3)"
	if ! [[ "${2:-}" =~ ^[0-9]+$ ]] || (($2 < 1 || $2 > ZK_NODES)); then
		die "$1: server id 1..$ZK_NODES expected, got '${2:-}'"
	fi
}

# resolve POM DIR CHECK...: resolve the dependencies of integration/stack/POM
# from Maven Central into DIR, once; each CHECK glob must then match a jar.
resolve() {
	local pom="$1" dir="$2" g
	shift 2
	if [[ -f "$dir/.complete" ]]; then return; fi
	command -v mvn >/dev/null || die "mvn not found (apt-get install maven)"
	log "resolving $pom from Maven Central into $dir"
	rm -rf "$dir"
	mkdir -p "$dir"
	# shellcheck disable=SC2086 # STACK_MVN_ARGS is a list of arguments
	mvn -q -B ${STACK_MVN_ARGS:-} -f "$ROOT/integration/stack/$pom" dependency:copy-dependencies \
		-DoutputDirectory="$dir" -DincludeScope=runtime >"$STACK_CACHE/mvn.log" 2>&1 ||
		{ cat "$STACK_CACHE/mvn.log" >&2; die "mvn could not resolve $pom"; }
	for g in "$@"; do
		compgen -G "$dir/$g" >/dev/null || die "$g missing in $dir after mvn"
	done
	touch "$dir/.complete"
}

# fetch_jars resolves Kafka and ZooKeeper from Maven Central: Kafka 3.9 and
# the ZooKeeper it depends on into $LIB, or, in KRaft mode, Kafka 4.x into
# $LIB_KRAFT and ZooKeeper 3.9 into $LIB_ZOOKEEPER.
fetch_jars() {
	mkdir -p "$STACK_CACHE"
	if kraft; then
		resolve pom-kraft.xml "$LIB_KRAFT" 'kafka_2.13-4.*.jar'
		resolve pom-zookeeper.xml "$LIB_ZOOKEEPER" 'zookeeper-3.9.*.jar'
	else
		resolve pom.xml "$LIB" 'kafka_2.13-*.jar' 'zookeeper-3.*.jar'
	fi
}

# alive NAME: true when the pid recorded for NAME runs and is still the
# process we started (its command line carries zkgroup.stack=NAME).
alive() {
	local f="$PIDS/$1.pid" pid
	[[ -f "$f" ]] || return 1
	pid="$(cat "$f")"
	[[ -n "$pid" ]] && kill -0 "$pid" 2>/dev/null || return 1
	# Guard against a recycled pid: the process must be the one we started.
	tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -q -- "zkgroup.stack=$1 " || return 1
}

port_open() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

# zk4 PORT CMD: send a ZooKeeper four-letter command to the server on PORT
# and print the answer.
zk4() {
	local out
	exec 3<>"/dev/tcp/127.0.0.1/$1" || return 1
	printf '%s' "$2" >&3
	out="$(timeout 5 cat <&3)" || true
	exec 3<&- 3>&-
	printf '%s' "$out"
}

# zk_mode ID: leader, follower or standalone while server ID serves
# clients; not-serving while it runs without a quorum; stopped otherwise.
zk_mode() {
	local out mode
	if ! alive "$(zk_name "$1")"; then echo stopped && return; fi
	out="$(zk4 "$(zk_port "$1")" srvr 2>/dev/null || true)"
	mode="$(sed -n 's/^Mode: //p' <<<"$out")"
	echo "${mode:-not-serving}"
}

# zk_leader: the id of the one server in Mode leader (fails if none).
zk_leader() {
	local i
	for ((i = 1; i <= ZK_NODES; i++)); do
		if [[ "$(zk_mode "$i")" == leader ]]; then echo "$i" && return; fi
	done
	return 1
}

# zk_dump: the sessions and ephemeral nodes, which only the leader (or the
# single server) lists.
zk_dump() {
	local id=1
	if ensemble; then id="$(zk_leader)" || return 1; fi
	zk4 "$(zk_port "$id")" dump
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

# log4j2_conf: the same levels for Kafka 4, which logs through log4j 2.
log4j2_conf() {
	cat >"$CONF/log4j2.properties" <<EOF
status = warn
appender.stdout.type = Console
appender.stdout.name = STDOUT
appender.stdout.layout.type = PatternLayout
appender.stdout.layout.pattern = [%d] %p %m (%c)%n
rootLogger.level = INFO
rootLogger.appenderRef.stdout.ref = STDOUT
logger.statechange.name = state.change.logger
logger.statechange.level = WARN
logger.request.name = kafka.request.logger
logger.request.level = WARN
EOF
}

# spawn NAME HEAP LIBDIR MAINCLASS ARGS...: start a JVM on the jars of
# LIBDIR in the background, detached from this shell, with its output in
# $LOGS/NAME.log and its pid in $PIDS.
spawn() {
	local name="$1" heap="$2" lib="$3"
	shift 3
	mkdir -p "$LOGS" "$PIDS"
	# shellcheck disable=SC2086 # STACK_JVM_OPTS is a list of options
	setsid nohup java -Xms64m -Xmx"$heap" $STACK_JVM_OPTS \
		-Djava.awt.headless=true -Dzkgroup.stack="$name" \
		-Dlog4j.configuration="file:$CONF/log4j.properties" \
		-Dlog4j2.configurationFile="$CONF/log4j2.properties" \
		-Dkafka.logs.dir="$LOGS" \
		-cp "$lib/*" "$@" >>"$LOGS/$name.log" 2>&1 </dev/null &
	echo $! >"$PIDS/$name.pid"
	await_exec "$name"
}

# await_exec NAME: wait until the process just started for NAME carries its
# label. Until the forked shell has exec'd the command, its command line is
# this script's, and alive would take it for a dead process.
await_exec() {
	local i pid
	pid="$(cat "$PIDS/$1.pid")"
	for ((i = 0; i < 100; i++)); do
		alive "$1" && return
		kill -0 "$pid" 2>/dev/null || return 0 # exited: the caller reports it
		sleep 0.02
	done
}

# zk_conf ID: the configuration of server ID (the single server when not
# an ensemble).
zk_conf() {
	local id="$1" j q
	cat <<EOF
dataDir=$STACK_DIR/$(zk_name "$id")
clientPort=$(zk_port "$id")
clientPortAddress=127.0.0.1
# tickTime 500 lets tests use session timeouts from 1 s (2 ticks) to 60 s.
tickTime=500
minSessionTimeout=1000
maxSessionTimeout=60000
maxClientCnxns=0
admin.enableServer=false
4lw.commands.whitelist=*
EOF
	ensemble || return 0
	cat <<EOF
# A follower has initLimit ticks (5 s) to sync with a new leader, and gives
# up on a leader it has not heard from for syncLimit ticks (5 s).
initLimit=10
syncLimit=10
# Off (the default, stated here): no server ever takes peer addresses from
# another's view, so each keeps reaching its peers through its own proxies.
reconfigEnabled=false
EOF
	for ((j = 1; j <= ZK_NODES; j++)); do
		if ((j == id)); then q="$(peer_real "$j")"; else q="$(peer_proxy "$id" "$j")"; fi
		echo "server.$j=127.0.0.1:$q:$((q + 1))"
	done
}

# start_zk ID: start server ID unless it runs.
start_zk() {
	local id="$1" name
	name="$(zk_name "$id")"
	if alive "$name"; then return; fi
	port_open "$(zk_port "$id")" && die "port $(zk_port "$id") is taken by a process this script did not start"
	mkdir -p "$STACK_DIR/$name" "$CONF"
	if ensemble; then
		port_open "$(peer_real "$id")" && die "peer port $(peer_real "$id") is taken by a process this script did not start"
		echo "$id" >"$STACK_DIR/$name/myid"
	fi
	log4j_conf
	zk_conf "$id" >"$CONF/$name.properties"
	if secure; then secure_zk_conf "$id" >>"$CONF/$name.properties"; fi
	# An ensemble server that finds no leader asks its peers again after
	# 0.2 s, then doubles the wait each time, by default up to 60 s: a server
	# cut off for half a minute would rejoin up to half a minute after the
	# heal. Two seconds at most keeps fault tests short.
	local jvm=()
	if ensemble; then jvm+=(-Dzookeeper.fastleader.maxNotificationInterval=2000); fi
	log "starting ZooKeeper $name on 127.0.0.1:$(zk_port "$id")"
	spawn "$name" 256m "$(zk_lib)" ${jvm[@]+"${jvm[@]}"} org.apache.zookeeper.server.quorum.QuorumPeerMain "$CONF/$name.properties"
}

# start_zkpeers: build and start the proxies of the ensemble's links.
start_zkpeers() {
	local i j links=() bin="$STACK_DIR/bin/zkpeers"
	if alive zkpeers; then return; fi
	mkdir -p "$STACK_DIR/bin" "$LOGS" "$PIDS"
	(cd "$ROOT" && go build -o "$bin" ./integration/cmd/zkpeers) || die "cannot build integration/cmd/zkpeers"
	for ((i = 1; i <= ZK_NODES; i++)); do
		for ((j = 1; j <= ZK_NODES; j++)); do
			((i != j)) || continue
			local p r
			p="$(peer_proxy "$i" "$j")" r="$(peer_real "$j")"
			port_open "$p" && die "peer proxy port $p is taken by a process this script did not start"
			port_open $((p + 1)) && die "peer proxy port $((p + 1)) is taken by a process this script did not start"
			links+=("quorum:$i:$j:$p:$r" "election:$i:$j:$((p + 1)):$((r + 1))")
		done
	done
	rm -f "$CUTS" "$APPLIED"
	log "starting zkpeers: ${#links[@]} links on ports $(peer_proxy 1 2) to $(($(peer_proxy "$ZK_NODES" $((ZK_NODES - 1))) + 1))"
	setsid nohup "$bin" -label zkgroup.stack=zkpeers -cuts "$CUTS" -applied "$APPLIED" "${links[@]}" \
		>>"$LOGS/zkpeers.log" 2>&1 </dev/null &
	echo $! >"$PIDS/zkpeers.pid"
	await_exec zkpeers
	local deadline=$((SECONDS + 10))
	until [[ -f "$APPLIED" ]]; do
		alive zkpeers || die "zkpeers exited; see $LOGS/zkpeers.log"
		((SECONDS < deadline)) || die "zkpeers not ready after 10s; see $LOGS/zkpeers.log"
		sleep 0.05
	done
}

# set_cut ID MODE: record server ID as cut (MODE silent or reset) or, with
# MODE "", as healed; then wait until zkpeers applied the new list.
set_cut() {
	local id="$1" m="$2" tmp deadline=$((SECONDS + 10))
	alive zkpeers || die "zkpeers is not running (start the stack with ZK_NODES=$ZK_NODES)"
	tmp="$(mktemp "$STACK_DIR/.cut.XXXXXX")"
	{
		if [[ -f "$CUTS" ]]; then awk -v id="$id" '$1 != id' "$CUTS"; fi
		if [[ -n "$m" ]]; then echo "$id $m"; fi
	} >"$tmp"
	mv "$tmp" "$CUTS"
	until cmp -s "$CUTS" "$APPLIED"; do
		alive zkpeers || die "zkpeers exited; see $LOGS/zkpeers.log"
		((SECONDS < deadline)) || die "zkpeers did not apply the cuts in 10s; see $LOGS/zkpeers.log"
		sleep 0.02
	done
	if [[ -n "$m" ]]; then log "cut server $id off from its peers ($m)"; else log "healed server $id"; fi
}

# wait_zk: the single server answers ruok; or every ensemble server answers
# ruok and serves as leader or follower, with exactly one leader.
wait_zk() {
	local deadline=$((SECONDS + STACK_TIMEOUT)) i ok leaders mode
	while :; do
		ok=1 leaders=0
		for ((i = 1; i <= ZK_NODES; i++)); do
			alive "$(zk_name "$i")" || die "ZooKeeper $(zk_name "$i") exited; see $LOGS/$(zk_name "$i").log"
			[[ "$(zk4 "$(zk_port "$i")" ruok 2>/dev/null)" == imok ]] || ok=0
			if ensemble; then
				mode="$(zk_mode "$i")"
				[[ "$mode" == leader || "$mode" == follower ]] || ok=0
				[[ "$mode" != leader ]] || leaders=$((leaders + 1))
			fi
		done
		if ensemble && ((leaders != 1)); then ok=0; fi
		((ok)) && return
		((SECONDS < deadline)) || die "ZooKeeper not ready after ${STACK_TIMEOUT}s"
		sleep 0.2
	done
}

# wait_serving ID: server ID serves as leader or follower.
wait_serving() {
	local deadline=$((SECONDS + STACK_TIMEOUT)) mode
	while :; do
		mode="$(zk_mode "$1")"
		[[ "$mode" == leader || "$mode" == follower ]] && return
		[[ "$mode" != stopped ]] || die "ZooKeeper $(zk_name "$1") exited; see $LOGS/$(zk_name "$1").log"
		((SECONDS < deadline)) || die "ZooKeeper $(zk_name "$1") not serving after ${STACK_TIMEOUT}s (mode $mode)"
		sleep 0.1
	done
}

start_all_zk() {
	local i
	if ensemble; then start_zkpeers; fi
	for ((i = 1; i <= ZK_NODES; i++)); do start_zk "$i"; done
	wait_zk
}

start_broker() {
	local id="$1" port
	port="$(broker_port "$id")"
	if alive "kafka-$id"; then return; fi
	port_open "$port" && die "port $port is taken by a process this script did not start"
	if kraft; then
		start_kraft_node "$id" "$port"
		return
	fi
	# After a kill, the dead broker's registration lives until its ZooKeeper
	# session times out; a broker started before that exits with NodeExists.
	local deadline=$((SECONDS + 30))
	while grep -q "/brokers/ids/$id\$" <<<"$(zk_dump 2>/dev/null || true)"; do
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
zookeeper.connect=$(broker_zk_connect)
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
	if secure; then secure_kafka_conf "$id" >>"$CONF/kafka-$id.properties"; fi
	log "starting Kafka broker $id on 127.0.0.1:$port"
	spawn "kafka-$id" "$KAFKA_HEAP" "$(kafka_lib)" kafka.Kafka "$CONF/kafka-$id.properties"
}

# start_kraft_node ID PORT: a Kafka 4 node that is both broker and the
# single voter of its own metadata quorum. Its log directory is formatted
# (kafka-storage format, whose class is kafka.tools.StorageTool) with a new
# cluster id the first time.
start_kraft_node() {
	local id="$1" port="$2" cport="$KAFKA_CONTROLLER_PORT" dir="$STACK_DIR/kafka-$1"
	port_open "$cport" && die "controller port $cport is taken by a process this script did not start"
	mkdir -p "$dir" "$CONF"
	log4j2_conf
	cat >"$CONF/kafka-$id.properties" <<EOF
process.roles=broker,controller
node.id=$id
controller.quorum.voters=$id@127.0.0.1:$cport
listeners=PLAINTEXT://127.0.0.1:$port,CONTROLLER://127.0.0.1:$cport
advertised.listeners=PLAINTEXT://127.0.0.1:$port
controller.listener.names=CONTROLLER
inter.broker.listener.name=PLAINTEXT
listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT
log.dirs=$dir
num.partitions=1
default.replication.factor=1
auto.create.topics.enable=true
delete.topic.enable=true
offsets.topic.replication.factor=1
offsets.topic.num.partitions=4
share.coordinator.state.topic.replication.factor=1
share.coordinator.state.topic.min.isr=1
transaction.state.log.replication.factor=1
transaction.state.log.min.isr=1
group.initial.rebalance.delay.ms=0
log.flush.interval.messages=1000000
num.network.threads=2
num.io.threads=2
background.threads=2
num.recovery.threads.per.data.dir=1
log.cleaner.enable=false
EOF
	if [[ ! -f "$dir/meta.properties" ]]; then
		local cluster
		cluster="$(head -c 16 /dev/urandom | base64 | tr '+/' '-_' | tr -d '=')"
		log "formatting $dir for KRaft (cluster id $cluster)"
		java -Dlog4j2.configurationFile="$CONF/log4j2.properties" -cp "$LIB_KRAFT/*" kafka.tools.StorageTool \
			format --cluster-id "$cluster" --config "$CONF/kafka-$id.properties" --ignore-formatted \
			>>"$LOGS/kafka-$id.log" 2>&1 || die "kafka-storage format failed; see $LOGS/kafka-$id.log"
	fi
	log "starting Kafka node $id (KRaft, broker and controller) on 127.0.0.1:$port, controller on 127.0.0.1:$cport"
	spawn "kafka-$id" "$KAFKA_HEAP" "$LIB_KRAFT" kafka.Kafka "$CONF/kafka-$id.properties"
}

# wait_brokers: every broker registered under /brokers/ids (seen in the
# ephemeral-node dump; not in KRaft mode, where brokers register with the
# controller) and its port accepting connections. The Go readiness check
# that follows proves the brokers answer metadata.
wait_brokers() {
	local deadline=$((SECONDS + STACK_TIMEOUT)) i ok dump=""
	while :; do
		ok=1
		if ! kraft; then dump="$(zk_dump 2>/dev/null || true)"; fi
		for ((i = 1; i <= KAFKA_BROKERS; i++)); do
			alive "kafka-$i" || die "broker $i exited; see $LOGS/kafka-$i.log"
			kraft || grep -q "/brokers/ids/$i\$" <<<"$dump" || ok=0
			port_open "$(broker_port "$i")" || ok=0
		done
		((ok)) && return
		((SECONDS < deadline)) || die "brokers not registered after ${STACK_TIMEOUT}s"
		sleep 0.2
	done
}

# ready: ask the brokers for metadata through sarama, via the Go helper, and
# create the test topics. In KRaft mode the brokers are found through their
# addresses, not through ZooKeeper, which has none.
ready() {
	local bootstrap=()
	if kraft; then bootstrap=(-bootstrap "$(broker_addrs)"); fi
	# shellcheck disable=SC2086 # STACK_TOPICS is a list of arguments
	(cd "$ROOT" && go run ./integration/cmd/stackready \
		-zookeeper "$(zk_addrs)" -brokers "$KAFKA_BROKERS" ${bootstrap[@]+"${bootstrap[@]}"} \
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

# stop_all_zk: stop every ZooKeeper server that has a pid file, whatever
# ZK_NODES says now.
stop_all_zk() {
	local f
	shopt -s nullglob
	for f in "$PIDS"/zookeeper*.pid; do stop_one "$(basename "$f" .pid)"; done
}

# ---- secure mode (STACK_SECURE=1) ----------------------------------------
# Everything of the secure mode is in this block; the rest of the script
# calls it only behind `if secure`.

SECURE="$STACK_DIR/secure"
SCRAM_USER="zkgroup"

secure() { [[ "$STACK_SECURE" == 1 ]]; }
zk_tls_port() { echo $((ZK_TLS_PORT + $1 - 1)); }
zk_tls_addrs() {
	local i out=""
	for ((i = 1; i <= ZK_NODES; i++)); do out+="${out:+,}127.0.0.1:$(zk_tls_port "$i")"; done
	echo "$out"
}
broker_ssl_port() { echo $((KAFKA_SSL_PORT + $1 - 1)); }
broker_ssl_addrs() {
	local i out=""
	for ((i = 1; i <= KAFKA_BROKERS; i++)); do out+="${out:+,}127.0.0.1:$(broker_ssl_port "$i")"; done
	echo "$out"
}

# secure_prepare: certificates and the SCRAM password, made once per data
# folder.
secure_prepare() {
	mkdir -p "$SECURE" "$LOGS"
	chmod 700 "$SECURE"
	(cd "$ROOT" && go run ./integration/cmd/seccerts -dir "$SECURE") || die "cannot make the certificates"
	[[ -s "$SECURE/scram.password" ]] ||
		(umask 077 && head -c 18 /dev/urandom | base64 | tr -d '/+=' >"$SECURE/scram.password")
}

# secure_zk_conf ID: the TLS client port of server ID. The plain port stays
# (the brokers use it).
secure_zk_conf() {
	cat <<EOF
# Secure mode: a TLS client port; clients must present a certificate
# signed by the stack's CA.
serverCnxnFactory=org.apache.zookeeper.server.NettyServerCnxnFactory
secureClientPort=$(zk_tls_port "$1")
secureClientPortAddress=127.0.0.1
ssl.keyStore.location=$SECURE/server.pem
ssl.keyStore.type=PEM
ssl.trustStore.location=$SECURE/ca.pem
ssl.trustStore.type=PEM
ssl.clientAuth=need
EOF
}

# secure_kafka_conf ID: a SASL_SSL listener beside the plain one (later
# keys replace earlier ones in a properties file). Brokers talk to each
# other over PLAINTEXT.
secure_kafka_conf() {
	local port sport
	port="$(broker_port "$1")" sport="$(broker_ssl_port "$1")"
	port_open "$sport" && die "port $sport is taken by a process this script did not start"
	cat <<EOF
listeners=PLAINTEXT://127.0.0.1:$port,SASL_SSL://127.0.0.1:$sport
advertised.listeners=PLAINTEXT://127.0.0.1:$port,SASL_SSL://127.0.0.1:$sport
inter.broker.listener.name=PLAINTEXT
sasl.enabled.mechanisms=SCRAM-SHA-512
listener.name.sasl_ssl.scram-sha-512.sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required;
ssl.keystore.type=PEM
ssl.keystore.location=$SECURE/server.pem
ssl.truststore.type=PEM
ssl.truststore.location=$SECURE/ca.pem
ssl.client.auth=none
EOF
}

# secure_scram_users: the SCRAM user, stored in ZooKeeper before any broker
# starts (Kafka 3.9 in ZooKeeper mode still accepts --zookeeper for this).
secure_scram_users() {
	log "creating SCRAM-SHA-512 user $SCRAM_USER"
	java -Xmx128m -Dlog4j.configuration="file:$CONF/log4j.properties" -cp "$LIB/*" kafka.admin.ConfigCommand \
		--zookeeper "127.0.0.1:$ZK_PORT" --alter --entity-type users --entity-name "$SCRAM_USER" \
		--add-config "SCRAM-SHA-512=[iterations=4096,password=$(cat "$SECURE/scram.password")]" \
		>>"$LOGS/scram.log" 2>&1 || die "cannot create the SCRAM user; see $LOGS/scram.log"
}

# secure_ready: the SASL_SSL listener answers metadata for the SCRAM user,
# found through ZooKeeper's TLS port.
secure_ready() {
	(cd "$ROOT" && go run ./integration/cmd/stackready \
		-zookeeper "$(zk_tls_addrs)" -brokers "$KAFKA_BROKERS" -timeout "${STACK_TIMEOUT}s" \
		-zk-tls-ca "$SECURE/ca.pem" -zk-tls-cert "$SECURE/client-cert.pem" -zk-tls-key "$SECURE/client-key.pem" \
		-listener SASL_SSL -kafka-tls-ca "$SECURE/ca.pem" \
		-sasl-user "$SCRAM_USER" -sasl-password-file "$SECURE/scram.password")
	log "secure: zookeeper TLS $(zk_tls_addrs), brokers SASL_SSL $(broker_ssl_addrs)"
}

secure_env() {
	echo "STACK_SECURE=1"
	echo "ZK_TLS_ADDR=$(zk_tls_addrs)"
	echo "KAFKA_SSL_ADDRS=$(broker_ssl_addrs)"
	echo "SECURE_DIR=$SECURE"
	echo "SCRAM_USER=$SCRAM_USER"
}
# ---- end of secure mode ----------------------------------------------------

cmd_up() {
	local t0=$SECONDS i
	fetch_jars
	if secure; then secure_prepare; fi
	start_all_zk
	if secure; then secure_scram_users; fi
	for ((i = 1; i <= KAFKA_BROKERS; i++)); do start_broker "$i"; done
	wait_brokers
	ready
	if secure; then secure_ready; fi
	log "stack ready in $((SECONDS - t0))s ($KAFKA_MODE mode): zookeeper $(zk_addrs), brokers $(broker_addrs)"
}

cmd_down() {
	local f
	shopt -s nullglob
	# Brokers first, so they deregister cleanly while ZooKeeper still runs.
	for f in "$PIDS"/kafka-*.pid; do stop_one "$(basename "$f" .pid)"; done
	stop_all_zk
	stop_one zkpeers
	rm -f "$CUTS" "$APPLIED"
	if [[ "${STACK_KEEP_DATA:-0}" != 1 ]]; then
		rm -rf "$STACK_DIR"/zookeeper "$STACK_DIR"/zookeeper-* "$STACK_DIR"/kafka-* "$SECURE"
	fi
	log "stack down"
}

# show NAME WHERE: one status line; fails when NAME does not run.
show() {
	printf '%-12s %-22s ' "$1" "$2"
	if alive "$1"; then echo "running (pid $(cat "$PIDS/$1.pid"))${3:+, $3}"; else echo stopped; return 3; fi
}

cmd_status() {
	local i rc=0 cut
	for ((i = 1; i <= ZK_NODES; i++)); do
		if ensemble; then
			cut=""
			if [[ -f "$CUTS" ]] && awk -v id="$i" '$1 == id {f = 1} END {exit !f}' "$CUTS"; then cut=", cut off from its peers"; fi
			show "$(zk_name "$i")" "127.0.0.1:$(zk_port "$i")" "$(zk_mode "$i")$cut" || rc=3
		else
			show zookeeper "127.0.0.1:$ZK_PORT" || rc=3
		fi
	done
	if ensemble; then show zkpeers "127.0.0.1:$(peer_proxy 1 2)+" || rc=3; fi
	for ((i = 1; i <= KAFKA_BROKERS; i++)); do
		show "kafka-$i" "127.0.0.1:$(broker_port "$i")" || rc=3
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
	echo "ZK_ADDR=$(zk_addrs)"
	echo "ZK_NODES=$ZK_NODES"
	echo "KAFKA_ADDRS=$(broker_addrs)"
	echo "KAFKA_MODE=$KAFKA_MODE"
	echo "STACK_DIR=$STACK_DIR"
	if secure; then secure_env; fi
}

usage() {
	awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"
	exit 2
}

case "${1:-}" in
up) cmd_up ;;
down) cmd_down ;;
status) cmd_status ;;
logs) cmd_logs ;;
env) cmd_env ;;
fetch) fetch_jars ;;
stop-zk)
	if [[ -n "${2:-}" ]]; then need_id "$1" "$2" && stop_one "$(zk_name "$2")"; else stop_all_zk; fi
	;;
kill-zk) need_id "$1" "${2:-}" && stop_one "$(zk_name "$2")" KILL ;;
start-zk)
	if [[ -n "${2:-}" ]]; then need_id "$1" "$2" && start_zk "$2" && wait_serving "$2"; else start_all_zk; fi
	;;
cut-zk)
	need_id "$1" "${2:-}"
	[[ "${3:-silent}" =~ ^(silent|reset)$ ]] || die "cut-zk: mode silent or reset expected, got '$3'"
	set_cut "$2" "${3:-silent}"
	;;
heal-zk) need_id "$1" "${2:-}" && set_cut "$2" "" ;;
zk-mode) need_id "$1" "${2:-}" && zk_mode "$2" ;;
zk-leader)
	ensemble || die "zk-leader needs an ensemble (ZK_NODES=3)"
	zk_leader || die "no server is leader"
	;;
stop-broker) stop_one "kafka-${2:?broker id}" ;;
kill-broker) stop_one "kafka-${2:?broker id}" KILL ;;
start-broker) start_broker "${2:?broker id}" && wait_brokers ;;
*) usage ;;
esac
