#!/usr/bin/env bash
# bench-compare.sh: the same integration benchmarks at two revisions,
# interleaved in one run, so that load from elsewhere on the machine weighs
# on both alike; prints the median of each metric at each revision and
# their ratio.
#
#   integration/bench-compare.sh [-n ROUNDS] [-bench REGEX] [-benchtime T] BEFORE AFTER
#
# BEFORE and AFTER are git revisions of this repository (AFTER may be
# "worktree": the checkout as it is, uncommitted changes included). Each is
# built once as a test binary of ./integration/ (in a temporary worktree);
# then ROUNDS times (default 5) both binaries run the benchmarks, the order
# alternating each round. Defaults: -bench 'IntegrationThroughput/paired$',
# -benchtime 2x. The stack must be running (integration/stack.sh up) and
# ZK_ADDR, KAFKA_ADDRS exported, as for the integration tests. Example:
#
#   integration/bench-compare.sh ad4d418 HEAD
#   integration/bench-compare.sh -n 3 -bench 'IntegrationScaleHandoff' -benchtime 1x ad4d418 HEAD
set -euo pipefail
rounds=5 bench='IntegrationThroughput/paired$' benchtime=2x
while (($#)); do
	case "$1" in
	-n) rounds="$2"; shift 2 ;;
	-bench) bench="$2"; shift 2 ;;
	-benchtime) benchtime="$2"; shift 2 ;;
	-h | --help) sed -n '2,19p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	-*) echo "bench-compare: unknown flag $1" >&2; exit 2 ;;
	*) break ;;
	esac
done
(($# == 2)) || { echo "usage: integration/bench-compare.sh [-n ROUNDS] [-bench REGEX] [-benchtime T] BEFORE AFTER" >&2; exit 2; }
[[ -n "${ZK_ADDR:-}" && -n "${KAFKA_ADDRS:-}" ]] || { echo "bench-compare: export ZK_ADDR and KAFKA_ADDRS (eval \"\$(integration/stack.sh env)\")" >&2; exit 2; }

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
work="$(mktemp -d)"
trap 'for d in "$work"/src-*; do [[ -d "$d" ]] && git -C "$repo" worktree remove --force "$d" >/dev/null 2>&1; done; rm -rf "$work"' EXIT

# build REV NAME: a test binary of ./integration/ at REV, run from its own
# integration directory (the tests find scripts relative to it).
build() {
	local rev="$1" name="$2" src
	if [[ "$rev" == worktree ]]; then
		src="$repo"
	else
		src="$work/src-$name"
		git -C "$repo" worktree add -q --detach "$src" "$rev"
	fi
	(cd "$src" && go test -c -o "$work/$name.test" ./integration/)
	echo "$src/integration" >"$work/$name.dir"
	echo "$name = $rev ($(git -C "$src" rev-parse --short HEAD))" >&2
}
build "$1" before
build "$2" after

run() {
	local name="$1" round="$2"
	(cd "$(cat "$work/$name.dir")" && "$work/$name.test" -test.run=NONE -test.bench="$bench" \
		-test.benchtime="$benchtime" -test.benchmem) |
		awk -v who="$name" -v round="$round" '/^Benchmark/ {
			for (i = 3; i < NF; i += 2) print who, $1, $(i+1), $i
		}' >>"$work/results"
}
for ((r = 1; r <= rounds; r++)); do
	if ((r % 2)); then order="before after"; else order="after before"; fi
	for name in $order; do
		echo "round $r/$rounds: $name" >&2
		run "$name" "$r"
	done
done

# The median of each benchmark's metric at each revision, and after/before.
awk '
	{ key = $2 " " $3; v[$1, key, ++n[$1, key]] = $4; keys[key] = 1 }
	function median(who, key,   m, i, j, t, a) {
		m = n[who, key]
		if (m == 0) return ""
		for (i = 1; i <= m; i++) a[i] = v[who, key, i]
		for (i = 2; i <= m; i++) for (j = i; j > 1 && a[j-1] > a[j]; j--) { t = a[j]; a[j] = a[j-1]; a[j-1] = t }
		return (m % 2) ? a[(m+1)/2] : (a[m/2] + a[m/2+1]) / 2
	}
	END {
		printf "%-58s %-26s %14s %14s %8s\n", "benchmark", "metric", "before", "after", "after/before"
		for (key in keys) {
			split(key, k, " ")
			b = median("before", key); a = median("after", key)
			r = (b != "" && a != "" && b + 0 != 0) ? sprintf("%.3f", a / b) : "-"
			printf "%-58s %-26s %14s %14s %8s\n", k[1], k[2], b, a, r
		}
	}' "$work/results" | { read -r header; echo "$header"; sort; }
