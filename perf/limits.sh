#!/usr/bin/env bash
# What the limits cost a run (issue 74): the same honest runs evaluated, one at a time,
# sandboxed, by a runner without limits (BEFORE: a build of the commit before them) and
# by one with them (AFTER), alternately, ROUNDS times each.
#
# Usage: bash perf/limits.sh BEFORE_BIN AFTER_BIN [RUNS] [ROUNDS]   (default 10 runs, 3 rounds)
#   e.g. git worktree add /tmp/before <commit>; (cd /tmp/before && CARGO_TARGET_DIR=/tmp/bt cargo build -p rexbench-runner --bin rexbench)
#        bash perf/limits.sh /tmp/bt/debug/rexbench target/debug/rexbench
set -euo pipefail
cd "$(dirname "$0")/.."
before=$1 after=$2 runs=${3:-10} rounds=${4:-3}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
for n in $(seq "$runs"); do
  mkdir -p "$work/outputs/wordfreq/none/$n"
  cp tasks/examples/outputs/wordfreq/none/1/patch.diff "$work/outputs/wordfreq/none/$n/patch.diff"
done
mkdir -p "$work/tmp"
one() {
  local bin=$1 out=$2 start end
  rm -rf "$out"
  start=$(date +%s.%N)
  TMPDIR=$work/tmp "$bin" evaluate "$work/outputs" --out "$out" --gold tasks/examples/gold --jobs 1 >/dev/null 2>&1
  end=$(date +%s.%N)
  echo "$end - $start" | bc -l
}
declare -a b a
for r in $(seq "$rounds"); do
  b+=("$(one "$before" "$work/before")")
  a+=("$(one "$after" "$work/after")")
done
grep -q '"outcome": "success"' "$work/after/runs/wordfreq/none/1/run.json" || { echo "perf/limits.sh: the honest run did not succeed with limits" >&2; exit 1; }
per_run() { printf '%s\n' "$@" | awk -v n="$runs" '{printf "%.2f s (%.0f ms a run)  ", $1, 1000 * $1 / n}'; }
echo "runs: $runs, one at a time, $rounds rounds each"
echo "without limits: $(per_run "${b[@]}")"
echo "with limits:    $(per_run "${a[@]}")"
