#!/usr/bin/env bash
# Benchmark: what a start of the server costs on a database that `perf/serve.sh` made and
# kept (BENCH_KEEP=DIR: its SQLite database and blobs; with BENCH_DATABASE_URL, that
# PostgreSQL database and DIR/blobs-postgres instead):
#   - the first submission after a start (a new bundle of 180 runs and 20 MB, sent as soon
#     as the server is ready): the start's garbage collection must not hold it up;
#   - the first answers after a start (the render cache off), which make the statistics:
#     the CSV (every task) and the public tasks' view, then each again (the median of five);
#   - the same after a change (one more agent's submission): the statistics made again,
#     every other agent's own numbers kept from before;
#   - the server makes the board's reads itself at a start and after each change
#     (server/src/warm.rs): how long that takes, and the first answers once it is done,
#     after a change and after a start.
# The answers right after a start or a change wait for the reads being made; with
# BENCH_WARM=off the first request makes them itself, as before the warm-up.
# Each run adds three agents to the kept database. Usage: BENCH_KEEP=DIR bash perf/start.sh
set -euo pipefail
cd "$(dirname "$0")/.."
source perf/kept.sh
kept_database
work=$(mktemp -d)
pid=""
cleanup() { [ -n "$pid" ] && kill "$pid" 2>/dev/null; rm -rf "$work"; }
trap cleanup EXIT

cargo build --release -q -p rexbench-server -p rexbench-runner
srv=$PWD/target/release/rexbench-server
rexbench=$PWD/target/release/rexbench
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
export DATABASE_URL=$url REXBENCH_BLOBS=$blobs REXBENCH_TASKS=$PWD/tasks RUST_LOG=warn REXBENCH_ADDR=127.0.0.1:$port \
  REXBENCH_WARM=${BENCH_WARM:-on} REXBENCH_RENDER_CACHE=off REXBENCH_SUBMISSIONS_PER_HOUR=1000000 REXBENCH_KEY_SUBMISSIONS_PER_HOUR=1000000
$rexbench keygen --out "$work/key" >/dev/null
# Three new agents' bundles of 180 runs: one sent first after the start, two as changes.
for which in first change again; do
  SEED=$RANDOM python3 perf/gen_results.py "$work/results-$which" 20 180 >/dev/null
  printf 'id = "start-bench-%s-%s"\nframework = "Bench"\nmodel = "Synthetic"\n' "$which" "$(date +%s)" > "$work/agent-$which.toml"
  $rexbench pack "$work/results-$which" --agent "$work/agent-$which.toml" --key "$work/key.pem" --out "$work/$which.tar.gz" >/dev/null
done
$srv keys add --public-key "$work/key.pub.pem" --owner "perf/start.sh" --tier maintainer >/dev/null

now() { date +%s.%N; }
start() {
  # What an earlier run or build left to write is flushed first: each ingest's one syncfs
  # would wait for it.
  sync
  local at; at=$(now)
  "$srv" serve >"$work/serve.log" 2>&1 & pid=$!
  until curl -sf "http://127.0.0.1:$port/readyz" >/dev/null; do
    kill -0 "$pid" 2>/dev/null || { cat "$work/serve.log" >&2; exit 1; }
    sleep 0.1
  done
  printf 'ready %.1f s after the start\n' "$(echo "$(now) - $at" | bc -l)"
}
stop() { kill "$pid"; wait "$pid" 2>/dev/null || true; pid=""; }

submit() {
  local at; at=$(now)
  $rexbench submit "$work/$1.tar.gz" --server "http://127.0.0.1:$port" >/dev/null
  printf '%s: answered in %.2f s\n' "$2" "$(echo "$(now) - $at" | bc -l)"
}
pages() {
  for path in /leaderboard.csv "/?tasks=public"; do
    first=$(curl -sf -o /dev/null -w '%{time_total}' "http://127.0.0.1:$port$path")
    median=$(for _ in 1 2 3 4 5; do curl -sf -o /dev/null -w '%{time_total}\n' "http://127.0.0.1:$port$path"; done | sort -n | sed -n 3p)
    printf '  %-18s first %.2f s, then %.1f ms (median of 5)\n' "$path" "$first" "$(echo "$median * 1000" | bc -l)"
  done
}

base=http://127.0.0.1:$port
metric() { curl -sf "$base/metrics" | awk -v m="$1" '$1 == m { print $2 }'; }
# Until the board's reads are made at the change log's newest position.
made_ready() {
  local newest
  newest=$(curl -sf "$base/api/v1/changes?limit=1" | python3 -c 'import json, sys; print(json.load(sys.stdin)["changes"][0]["seq"])')
  until [ "$(metric rexbench_board_ready_generation)" = "$newest" ]; do sleep 0.2; done
  printf '  the board made ready (change %s) in %.2f s\n' "$newest" "$(metric rexbench_board_ready_seconds)"
}

start
submit first "the first submission after the start"
echo "the first answers right after the start:"
pages
submit change "a change: one more agent's submission"
echo "the first answers right after the change:"
pages
if [ "${BENCH_WARM:-on}" != off ]; then
  submit again "another change"
  made_ready
  echo "the first answers once the change is made ready:"
  pages
  stop
  start
  made_ready
  echo "the first answers once the start is made ready:"
  pages
fi
stop
