#!/usr/bin/env bash
# Benchmark: intervals, rank ranges and groups (the cluster bootstrap of
# stats/src/lib.rs) for 1,000 agents × 12 tasks × 3 conditions × 5 runs, on one core,
# then again after one more agent came (the others' own numbers kept).
# Goal (issue 6): under 2 s. Usage: bash perf/stats.sh [AGENTS]
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release -q -p rexbench-stats --example stats_bench
for _ in 1 2 3; do
  taskset -c 0 target/release/examples/stats_bench "${1:-1000}"
done
