#!/usr/bin/env bash
# Benchmark: `rexbench evaluate --jobs 2` over 100 runs of the example tasks.
# Goal (issue 3): total wall time at most 1.2x the runs' own wall times summed and
# divided by 2, i.e. the runner's own work (copying codebases, applying patches,
# checking) and its scheduling cost at most 20% on top of the experiments.
# Usage: bash perf/evaluate.sh [RUNS]   (default 100)
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-100}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

cargo build --release -q -p rexbench-runner
src=tasks/examples/outputs
# Half wordfreq, half csvstats; successes and failures that run the experiment.
n=0
while [ $n -lt "$runs" ]; do
  for pick in wordfreq/none/1 wordfreq/none/2 wordfreq/hints/1 csvstats; do
    [ $n -lt "$runs" ] || break
    n=$((n + 1))
    case $pick in
      csvstats)
        mkdir -p "$work/outputs/csvstats/none/$n"
        cp $src/csvstats/example-agent_default_run1.patch "$work/outputs/csvstats/none/$n/patch.diff" ;;
      *)
        mkdir -p "$work/outputs/wordfreq/none/$n"
        cp $src/$pick/patch.diff "$work/outputs/wordfreq/none/$n/patch.diff" ;;
    esac
  done
done

start=$(date +%s.%N)
target/release/rexbench evaluate "$work/outputs" --out "$work/results" --gold tasks/examples/gold --jobs 2 2>/dev/null
end=$(date +%s.%N)
wall=$(echo "$end - $start" | bc -l)
own=$(find "$work/results/runs" -name run.json -exec python3 -c '
import json, sys
print(sum(json.load(open(p)).get("duration_s", 0) for p in sys.argv[1:]))' {} + | awk '{s+=$1} END {print s}')
ideal=$(echo "$own / 2" | bc -l)
printf 'runs:                        %d (--jobs 2)\n' "$runs"
printf "runs' own wall time, summed: %.2f s (ideal with 2 jobs: %.2f s)\n" "$own" "$ideal"
printf 'evaluate wall time:          %.2f s\n' "$wall"
printf 'ratio to ideal:              %.3fx (goal <= 1.2x)\n' "$(echo "$wall / $ideal" | bc -l)"
