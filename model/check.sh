#!/usr/bin/env bash
# Checks the protocol model (protocol.pml) with SPIN:
#  - the correct model: safety (assertions) under several bounds, and the
#    liveness property under weak fairness; each must pass;
#  - the bug variants and the variants that show the findings in README.md:
#    each must FAIL (and its shortest trail is printed).
# Exits non-zero if the correct model violates anything or a variant does
# not fail. Runs two checks at a time (about a minute on two cores).
set -uo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
command -v spin >/dev/null || { echo "check.sh: spin is not installed (apt-get install spin)" >&2; exit 2; }
command -v gcc >/dev/null || { echo "check.sh: gcc is not installed" >&2; exit 2; }
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
JOBS="${JOBS:-2}"

# name | kind (safety|live) | expect (pass|fail) | spin -D flags | what it checks
checks=(
	"safety|safety|pass||N=2: 2 lost replies, 2 expiries/restarts, 1 reset, 1 rebalance, ZB=1"
	"safety-n3|safety|pass|-DN=3 -DMAXREB=2 -DMAXLOST=1 -DMAXSESS=4|N=3: 2 rebalances (0->1->2), 1 lost reply, 1 expiry/restart"
	"safety-zb2|safety|pass|-DZB=2 -DMAXSESS=3|a cut-off instance takes 2 more steps"
	"safety-resets|safety|pass|-DMAXRESET=2 -DMAXSESS=3 -DMAXLOST=1|2 resets"
	"liveness|live|pass|-DMAXLOST=1 -DMAXSESS=3|<>[] owned by the assigned instance, weak fairness"
	"bug-a-release-no-epoch|safety|fail|-DBUG_RELEASE_NOEPOCH|(a) release without the epoch check deletes the new owner's node (3)"
	"bug-b-no-indoubt|safety|fail|-DBUG_NO_INDOUBT|(b) no in-doubt resolution: our own lost write reported as a conflict (4)"
	"bug-c-reset-no-bump|safety|fail|-DBUG_RESET_NOBUMP|(c) reset without epoch bump: an owner overwrites the reset (2)"
	"find-1-release-epoch-only|live|fail|-DRELEASE_EPOCH_ONLY -DMAXLOST=1 -DMAXSESS=3|finding 1: a lost claim leaves its owner node behind"
	"find-2-doubt-one|safety|fail|-DDOUBT_ONE -DMAXSESS=3|finding 2: one in-doubt record is not enough (4)"
	"find-3-del-epoch|safety|fail|-DOP_DEL_EPOCH|finding 3: deleting the epoch node with no owner node (1)/(3)"
	"find-4-del-offset|safety|fail|-DOP_DEL_OFFSET|finding 4: deleting the offset node without a reset (2)"
	"note-unfenced-set|safety|fail|-DOP_SET_OFFSET -DMAXSESS=2 -DMAXREB=0|note: an unfenced write of the same value is taken for our in-doubt write (4)"
)

# trail prints a trail as one line per step: step, process, source line.
trail() {
	awk -v src="$1" '
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
			if (s ~ /^(do|od|fi|if|::? *else|k = 0|:: k < N|dfl\[i\]|rex\[i\]|st\[i\] = IDLE)/) next
			printf "      %4d %-9s L%-4s %s\n", step, name, ln, substr(s, 1, 100)
		}'
}

run() { # name kind expect flags desc
	local name=$1 kind=$2 expect=$3 flags=$4 desc=$5 d="$work/$1"
	mkdir -p "$d" && cp "$here/protocol.pml" "$d/" && cd "$d" || return 1
	local t0=$SECONDS cc=(-O2 -DNOBOUNDCHECK -DMEMLIM=${MEMLIM:-4000}) args=(-m400000 -c1)
	[[ $kind == live ]] && flags="-DLIVE $flags" && args+=(-a -f)
	[[ $kind == safety ]] && cc+=(-DSAFETY)
	[[ $kind == safety && $expect == fail ]] && cc+=(-DBFS) # shortest trail
	# shellcheck disable=SC2086
	spin -a $flags protocol.pml >spin.log 2>&1 && gcc "${cc[@]}" -o pan pan.c 2>gcc.log &&
		./pan "${args[@]}" >pan.log 2>&1
	local errors states trans elapsed ok=0
	errors=$(awk '/errors:/ {print $NF; exit}' pan.log)
	states=$(awk '/states, stored/ {print $1; exit}' pan.log)
	trans=$(awk '/transitions/ {print $1; exit}' pan.log)
	elapsed=$(awk '/elapsed time/ {print $4; exit}' pan.log)
	if grep -q "max search depth too small\|Search not completed" pan.log && [[ ${errors:-x} == 0 ]]; then
		errors=incomplete
	fi
	case $expect:${errors:-x} in
	pass:0) ok=1 ;;
	fail:[1-9]*) ok=1 ;;
	esac
	{
		printf '%s %-28s %-6s expect %-4s errors=%-3s states=%-9s transitions=%-10s pan %ss, total %ss\n' \
			"$([[ $ok == 1 ]] && echo OK || echo FAIL)" "$name" "$kind" "$expect" "${errors:-?}" "${states:-?}" "${trans:-?}" "${elapsed:-?}" "$((SECONDS - t0))"
		echo "   $desc; flags: ${flags:-(none)}"
		if [[ ${errors:-x} != 0 && -f protocol.pml.trail ]]; then
			if [[ $expect == pass ]]; then
				echo "   full trail:"
				# shellcheck disable=SC2086
				spin -t -p $flags protocol.pml 2>&1 | sed 's/^/      /'
			else
				echo "   trail (one line per step):"
				# shellcheck disable=SC2086
				spin -t -p $flags protocol.pml 2>&1 | trail protocol.pml |
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
	IFS='|' read -r name kind expect flags desc <<<"$c"
	while (($(jobs -rp | wc -l) >= JOBS)); do wait -n; done
	run "$name" "$kind" "$expect" "$flags" "$desc" &
done
wait

status=0
for c in "${checks[@]}"; do
	name=${c%%|*}
	cat "$work/$name/report" 2>/dev/null || echo "FAIL $name: no report"
	[[ -f $work/$name/ok ]] || status=1
done
echo
echo "properties: (1) only the latest claim commits; (2) the committed offset never decreases,"
echo "  and no commit overwrites a reset its writer has not read; (3) an instance deletes only its"
echo "  own owner node; (4) an in-doubt write is resolved as ours only if it was ours, and a conflict"
echo "  is reported only when someone else wrote; liveness: <>[] the assigned instance owns the partition."
echo "protocol model: $([[ $status == 0 ]] && echo "all checks as expected" || echo FAILED) after $((SECONDS - T0))s"
exit $status
