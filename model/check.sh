#!/usr/bin/env bash
# Checks the protocol model (protocol.pml) with SPIN:
#  - the correct model: safety (assertions) under several bounds, with
#    ZooKeeper and with dual (ZooKeeper + Kafka) offset storage, and the
#    liveness property under weak fairness; each must pass;
#  - the variants (bugs, the old code, findings in README.md): each must
#    FAIL, and fail the property it is listed with (its trail is printed).
# Exits non-zero if the correct model violates anything, or a variant does
# not fail its property. Runs two checks at a time (4 to 9 minutes on
# two cores); JOBS=1 runs one at a time, ONLY=static the checks whose name
# matches.
set -uo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
command -v spin >/dev/null || { echo "check.sh: spin is not installed (apt-get install spin)" >&2; exit 2; }
command -v gcc >/dev/null || { echo "check.sh: gcc is not installed" >&2; exit 2; }
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
JOBS="${JOBS:-2}"
ONLY="${ONLY:-}" # a regular expression: only the checks whose name matches

# name | kind (safety|live) | expect (pass, or the property that must fail:
# 1..8 or live) | spin -D flags | what it checks | model (default
# protocol.pml). Longest first.
checks=(
	"static-liveness|live|pass||static members: <>[] every partition owned, weak fairness; 2 leaves, each back or gone|static.pml"
	"safety|safety|pass||N=2: 2 lost replies, 1 cut-off, 2 expiries/restarts, 1 reset, 1 rebalance, buffer of 1"
	"dual|safety|pass|-DDUAL -DMAXOFF=2|dual storage: ZooKeeper + Kafka; resets refused while members are registered"
	"safety-n3|safety|pass|-DN=3 -DMAXREB=2 -DMAXLOST=1 -DMAXSESS=4 -DMAXOFF=2|N=3: 2 rebalances (0->1->2), 1 lost reply, offsets 0..2"
	"safety-upstream|safety|pass|-DUPSTREAM -DMAXLOST=1|an upstream member's owner node (version 0, no epoch bump): no release deletes it; 1 lost reply"
	"safety-upstream-no-fast|safety|pass|-DUPSTREAM -DNO_FAST_RELEASE -DMAXLOST=1|the same with the read path alone (no fast path), 1 lost reply"
	"liveness|live|pass|-DMAXLOST=1 -DMAXSESS=3 -DMAXOFF=1 -DMAXFAIL=1|<>[] owned by the assigned instance, weak fairness; 1 ReleaseAfterLoss failing for good"
	"liveness-no-sweep|live|pass|-DNO_MANAGE_CLEANUP -DMAXLOST=1 -DMAXSESS=3 -DMAXOFF=1|no sweep and nothing failing for good: the fallback and the stop clean-up suffice"
	"safety-sweep|safety|pass|-DMAXFAIL=1 -DMAXLOST=1|1 ReleaseAfterLoss failing for good, then the manage loop's sweep; 1 lost reply"
	"safety-resets|safety|pass|-DREWIND -DMAXRESET=2 -DMAXSESS=3 -DMAXLOST=1|2 resets, or the owner's rewinds (RewindOffsetFenced)"
	"safety-cut2|safety|pass|-DMAXCUT=2 -DMAXLOST=1 -DMAXOFF=2|2 cut-offs (both clients, or one twice), 1 lost reply, offsets 0..2"
	"safety-buffer2|safety|pass|-DNB=2 -DMAXLOST=1|a claim's buffer of 2, 1 lost reply"
	"dual-no-recheck|safety|pass|-DDUAL -DKAFKA_NO_RECHECK -DMAXOFF=2 -DMAXLOST=1|a Kafka commit sent again without a new check breaks nothing more"
	"live-a-release-claim-epoch|live|live|-DRELEASE_NO_FALLBACK -DNO_MANAGE_CLEANUP -DMAXCUT=0 -DMAXLOST=1 -DMAXSESS=3 -DMAXOFF=1|old code: a release refused with claim lost (a reset) leaves the owner node"
	"live-b-stop-during-claim|live|live|-DNO_STOP_CLEANUP -DNO_MANAGE_CLEANUP -DMAXLOST=1 -DMAXSESS=3 -DMAXOFF=1|old code: a claim whose reply was lost, then stopped, leaves the owner node"
	"live-c-no-sweep|live|live|-DNO_MANAGE_CLEANUP -DMAXFAIL=1 -DMAXLOST=1 -DMAXSESS=3 -DMAXOFF=1|no sweep: a ReleaseAfterLoss that failed for good leaves the owner node"
	"fence-no-recall|safety|5|-DNO_RECALL_ON_PAUSE|the pause leaves the buffer to the handler: read after another owner delivers"
	"fence-expiry-before-pause|safety|5|-DNO_FENCE|a session expires before the fence paused"
	"fence-no-session-check|safety|5|-DNO_SEND_VALID|a hand-over after the session was replaced"
	"bug-a-release-no-epoch|safety|3|-DBUG_RELEASE_NOEPOCH|release without the epoch check deletes the new owner's node"
	"bug-d-fast-any-version|safety|3|-DUPSTREAM -DBUG_FAST_RELEASE_ANY_VERSION|the fast release deletes at any version: an upstream member's node goes"
	"bug-b-no-indoubt|safety|4|-DBUG_NO_INDOUBT|no in-doubt resolution: our own lost write reported as a conflict"
	"bug-c-reset-no-bump|safety|2|-DBUG_RESET_NOBUMP|reset without epoch bump: an owner overwrites the reset"
	"find-2-doubt-one|safety|4|-DDOUBT_ONE -DMAXSESS=3|one in-doubt record is not enough"
	"find-3-del-epoch|safety|3|-DOP_DEL_EPOCH|deleting the epoch node with no owner node"
	"find-7-upstream-v0|safety|3|-DUPSTREAM -DOWNER_V0 -DNO_FAST_RELEASE|the code before (owner nodes at version 0, no fast path): a stale-node deletion or a release deletes an upstream member's node (mixed fleet)"
	"find-4-del-offset|safety|2|-DOP_DEL_OFFSET|deleting the offset node without a reset"
	"note-unfenced-set|safety|4|-DOP_SET_OFFSET -DMAXSESS=2 -DMAXREB=0|an unfenced write of the same value is taken for our in-doubt write"
	"find-5-conflict-read-no-epoch|safety|4|-DCONFLICT_NO_EPOCH|the conflict read without the epoch read after it: a reset in between is taken for our write"
	"dual-reset-not-refused|safety|2|-DDUAL -DDUAL_RESET -DMAXOFF=2|a reset of both stores while members run: a late Kafka commit lands over it"
	"find-6-dual-reset-window|safety|2|-DDUAL -DMAXCUT=2 -DMAXLOST=0 -DMAXREB=0 -DMAXOFF=2|refused only while members are registered: a Kafka commit in flight outlives both sessions"
	"note-kafka-only|safety|2|-DDUAL -DKAFKA_ONLY -DMAXLOST=0 -DMAXREB=2 -DMAXCUT=0|Kafka storage alone: two late commits land out of order, the next owner starts lower"
	"static-safety|safety|pass||static members: 3 members, 2 leaves (Close or crash, each back or gone), a window of 2 reads|static.pml"
	"static-safety-win3|safety|pass|-DWIN=3|static members: a window of 3 reads|static.pml"
	"static-no-reservation|safety|7|-DNO_RESERVATION|views of registered members only (upstream's): a partition moves during a restart|static.pml"
	"static-version-timing|safety|8|-DVERSION_TIMING|an absence named by the version: a reservation created anew (version 0 again) is ended at once|static.pml"
	"note-static-delete-aba|safety|8|-DSPLIT_DELETE|the delete a round trip after its read: another deletion, the member back and gone again in between, and the new reservation goes|static.pml"
	"static-live-no-delete|live|live|-DNO_DELETE|nobody deletes a reservation whose window ended: a gone member's partition stays unowned|static.pml"
	"static-release-reserved|safety|9|-DRELEASE_RESERVED|a partition consumed here that a reserved share names after the shares were computed again is released, and waits unowned for the window|static.pml"
)

# trail prints a trail as one line per step: step, process, source line.
trail() {
	awk -v src="$1" -v dedupe="${2:-0}" '
		BEGIN { while ((getline l < src) > 0) lines[++n] = l }
		/assertion violated|acceptance cycle|START OF CYCLE/ { print "      " $0; next }
		match($0, /^ *[0-9]+:\tproc +[0-9]+ \(([A-Za-z]+)[^)]*\) [^:]+:[0-9]+ /) {
			split($0, a, ":"); step = a[1] + 0
			if (step == last) next
			last = step
			name = $0; sub(/^[^(]*\(/, "", name); sub(/[:)].*/, "", name)
			if (name == "init") next
			if (name == "Instance") { pid = $0; sub(/^[^p]*proc +/, "", pid); sub(/ .*/, "", pid); name = "inst" (pid - 3) }
			ln = $0; sub(/^[^(]*\([^)]*\) [^:]+:/, "", ln); sub(/ .*/, "", ln)
			s = lines[ln + 0]; gsub(/^[ \t]+/, "", s)
			if (s ~ /^(do|od|fi|if|::? *else|k = 0|:: k < N|st\[i\] = IDLE|CHECKROOM|:: true|:: e == 0 ->|dfl\[i\] = 0|rex\[i\] = 0|skip|e = 0;? *$)/) next
			if (dedupe) { # a loop of one process: print each of its lines once per 8 printed
				key = name ":" ln; seen = 0
				for (k = 0; k < 8; k++) if (recent[k] == key) seen = 1
				if (seen) { skipped++; next }
				recent[nr++ % 8] = key
			}
			printf "      %4d %-9s L%-4s %s\n", step, name, ln, substr(s, 1, 110)
		}'
}

run() { # name kind expect flags desc model
	local name=$1 kind=$2 expect=$3 flags=$4 desc=$5 model=${6:-protocol.pml} d="$work/$1"
	mkdir -p "$d" && cp "$here/$model" "$d/" && cd "$d" || return 1
	local t0=$SECONDS cc=(-O2 -DNOBOUNDCHECK -DMEMLIM=${MEMLIM:-8000}) args=(-m400000 -c1 -w26)
	[[ $kind == live ]] && flags="-DLIVE $flags" && args+=(-a -f)
	[[ $kind == safety ]] && cc+=(-DSAFETY)
	[[ $kind == safety && $expect != pass ]] && cc+=(-DBFS) # shortest trail
	# shellcheck disable=SC2086
	spin -a $flags "$model" >spin.log 2>&1 && gcc "${cc[@]}" -o pan pan.c 2>gcc.log &&
		./pan "${args[@]}" >pan.log 2>&1
	local errors states trans elapsed depth failed="" ok=0
	errors=$(awk '/errors:/ {print $NF; exit}' pan.log)
	states=$(awk '/states, stored/ {print $1; exit}' pan.log)
	trans=$(awk '/transitions/ {print $1; exit}' pan.log)
	elapsed=$(awk '/elapsed time/ {print $4; exit}' pan.log)
	depth=$(awk '/depth reached/ {d = $0; sub(/.*depth reached /, "", d); sub(/,.*/, "", d); print d; exit}' pan.log)
	if grep -q "max search depth too small\|Search not completed" pan.log && [[ ${errors:-x} == 0 ]]; then
		errors=incomplete
	fi
	if [[ ${errors:-x} != 0 && -f $model.trail ]]; then
		# shellcheck disable=SC2086
		spin -t -p $flags "$model" >replay.log 2>&1
		depth=$(grep -o "(at depth [0-9]*)" pan.log | head -1 | tr -dc 0-9)
		if grep -q "acceptance cycle" pan.log; then
			failed=live
		else # the property tag on the failed assertion's line
			local ln
			ln=$(grep -o "$model:[0-9]*, Error: assertion violated" replay.log | head -1 | cut -d: -f2 | cut -d, -f1)
			failed=$(sed -n "${ln:-0}p" "$model" | grep -o '/\*([0-9])\*/' | tr -dc 0-9)
			failed=${failed:-bound}
		fi
	fi
	case $expect:${errors:-x} in
	pass:0) ok=1 ;;
	*:[1-9]*) [[ $expect == "$failed" ]] && ok=1 ;;
	esac
	{
		printf '%s %-28s %-6s expect %-4s got %-5s states=%-9s transitions=%-10s depth=%-4s pan %ss, total %ss\n' \
			"$([[ $ok == 1 ]] && echo OK || echo FAIL)" "$name" "$kind" "$expect" "${failed:-${errors:-?}}" \
			"${states:-?}" "${trans:-?}" "${depth:-?}" "${elapsed:-?}" "$((SECONDS - t0))"
		echo "   $desc; flags: ${flags:-(none)}"
		if [[ ${errors:-x} != 0 && -f $model.trail ]]; then
			if [[ $expect == pass ]]; then
				echo "   full trail:"
				sed 's/^/      /' replay.log
			else
				echo "   trail (one line per step):"
				trail "$model" "$([[ $kind == live ]] && echo 1 || echo 0)" <replay.log |
					awk '/START OF CYCLE/ { c = 1 } { if (c) n++; if (!c || n <= 12) print }'
			fi
		elif [[ $ok != 1 ]]; then
			sed 's/^/      /' spin.log gcc.log pan.log | tail -40
		fi
	} >"$d/report"
	[[ $ok == 1 ]] && touch "$d/ok"
}

T0=$SECONDS
echo "protocol model: spin $(spin -V | awk '{print $3}'), $JOBS checks at a time"
for c in "${checks[@]}"; do
	IFS='|' read -r name kind expect flags desc model <<<"$c"
	[[ -n $ONLY && ! $name =~ $ONLY ]] && continue
	while (($(jobs -rp | wc -l) >= JOBS)); do wait -n; done
	run "$name" "$kind" "$expect" "$flags" "$desc" "$model" &
done
wait

status=0
for c in "${checks[@]}"; do
	name=${c%%|*}
	[[ -n $ONLY && ! $name =~ $ONLY ]] && continue
	cat "$work/$name/report" 2>/dev/null || echo "FAIL $name: no report"
	[[ -f $work/$name/ok ]] || status=1
done
echo
echo "properties: (1) only the latest claim commits; (2) the committed offset never decreases, no"
echo "  commit (ZooKeeper or Kafka) lands over a reset its writer has not read, and the latest claim"
echo "  starts at the highest offset committed since the last reset (the higher store with dual"
echo "  storage); (3) an instance deletes only its own owner node; (4) an in-doubt write is resolved"
echo "  as ours only if it was ours (or a reset came between the refused commit and the read), and a"
echo "  conflict is reported only when someone else wrote; (5) one deliverer: only the latest claim"
echo "  hands messages to an application; live: <>[] the assigned instance owns the partition."
echo "static.pml: (6) one owner; (7) while every reservation stands, a partition is claimed by its"
echo "  original owner only (a restart moves nothing, a member back takes only its own share); (8) a"
echo "  reservation is deleted only by an instance that timed a full window of that absence (its last"
echo "  write); (9) a partition consumed here is never left to a reserved share (kept until its member"
echo "  is back); live: <>[] every partition owned (a gone member's share moves after its window)."
echo "protocol model: $([[ $status == 0 ]] && echo "all checks as expected" || echo FAILED) after $((SECONDS - T0))s"
exit $status
