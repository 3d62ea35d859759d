#!/usr/bin/env bash
# Benchmark: read throughput of one server process against two (issue 30), both on the
# same PostgreSQL database, on a database of N synthetic agents (default 1,000) × 12
# tasks × 3 conditions × 5 runs made through the normal ingest path.
#
# The load is a mix of pages a visitor reads: the leaderboard, agents' pages, task
# pages, run pages and their artifacts, cycled in a fixed order (perf/scale.lua). It
# is measured twice: as deployed (the render cache on: repeated pages come from memory)
# and with every page rendered afresh (the render cache off: every request reads the
# database, which is what a second process shares). The load generator is the same in
# both set-ups, two wrk processes of 32 connections each: both against the one server,
# or one against each of the two, and the figure is their sum. Everything (wrk, the
# servers, PostgreSQL) runs on this machine, so this measures what a second process
# gains on the same cores; several machines are what scaling out is for.
# Needs wrk. Usage: BENCH_DATABASE_URL=postgres://user:pass@127.0.0.1/empty_db bash perf/scale.sh [AGENTS]
set -euo pipefail
cd "$(dirname "$0")/.."
agents=${1:-1000}
: "${BENCH_DATABASE_URL:?perf/scale.sh needs BENCH_DATABASE_URL: an empty PostgreSQL database}"
for tool in wrk curl python3; do
  command -v "$tool" >/dev/null || { echo "perf/scale.sh needs $tool (apt-get install $tool)" >&2; exit 1; }
done
work=$(mktemp -d)
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; rm -rf "$work"; }
trap cleanup EXIT

cargo build --release -q -p rexbench-server -p rexbench-runner
srv=$PWD/target/release/rexbench-server
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
wait_ready() { for _ in $(seq 1200); do curl -sf "$1/readyz" >/dev/null && return 0; sleep 0.1; done; echo "server not ready" >&2; exit 1; }

export DATABASE_URL=$BENCH_DATABASE_URL REXBENCH_BLOBS="$work/blobs" REXBENCH_TASKS=$PWD/tasks RUST_LOG=warn \
  REXBENCH_SUBMISSIONS_PER_HOUR=1000000 REXBENCH_KEY_SUBMISSIONS_PER_HOUR=1000000
started=$(date +%s.%N)
"$srv" synth --agents "$agents" >/dev/null
printf 'synthetic data: %s agents ingested in %.0f s\n' "$agents" "$(echo "$(date +%s.%N) - $started" | bc -l)"

# The pages: the leaderboard in two orders, the tasks, two task pages, the failures, and
# for 20 agents spread over the list their page and one run's page and patch.
port=$(free_port)
REXBENCH_ADDR=127.0.0.1:$port "$srv" serve & pid=$!; pids+=("$pid")
wait_ready "http://127.0.0.1:$port"
base=http://127.0.0.1:$port
{
  echo /; echo "/?sort=cost-none"; echo /tasks; echo /failures
  for t in cogs othello; do echo "/tasks/$t"; done
  for i in $(seq 0 $((agents / 20 > 0 ? agents / 20 : 1)) $((agents - 1)) | head -20); do
    agent=$(printf 'synthetic-%05d' "$i")
    echo "/agents/$agent"
    run=$(curl -sf "$base/agents/$agent?task=cogs&hint=none" | grep -o 'href="/runs/[0-9]*"' | head -1 | grep -o '[0-9]*')
    echo "/runs/$run"
    patch=$(curl -sf "$base/api/v1/runs/$run" | python3 -c 'import json,sys; print(next(a["digest"] for a in json.load(sys.stdin)["artifacts"] if a["role"] == "patch"))')
    echo "/artifacts/$patch"
  done
} > "$work/paths"
kill "$pid"; wait "$pid" 2>/dev/null || true
printf 'pages: %s paths (leaderboard, tasks, failures, agents, runs, patches)\n' "$(wc -l < "$work/paths")"

# Two wrk processes of 32 connections, one per URL given (twice the same for one
# server); prints their summed requests/s and the worse p99.
load() {
  local i=0 url
  for url in "$@"; do
    SEED=$i PATHS=$work/paths wrk -t1 -c32 -d"${BENCH_SECONDS:-10}"s --latency -s perf/scale.lua "$url" > "$work/wrk$i.txt" &
    i=$((i + 1))
  done
  wait
  local f
  for f in "$work"/wrk[0-9].txt; do
    if grep -q 'Non-2xx\|Socket errors' "$f"; then echo "errors under load:" >&2; cat "$f" >&2; exit 1; fi
  done
  python3 - "$work"/wrk[0-9].txt <<'PY'
import sys
def ms(v):
    for unit, f in (("us", 0.001), ("ms", 1), ("s", 1000)):
        if v.endswith(unit) and (unit != "s" or not v.endswith(("us", "ms"))):
            return float(v[: -len(unit)]) * f
rps, p99 = 0.0, 0.0
for name in sys.argv[1:]:
    for line in open(name):
        w = line.split()
        if w[:1] == ["Requests/sec:"]:
            rps += float(w[1])
        if w[:1] == ["99%"]:
            p99 = max(p99, ms(w[1]))
print(f"{rps:.0f} req/s (p99 {p99:.1f} ms)")
PY
}

for cache in on off; do
  a=$(free_port) b=$(free_port)
  REXBENCH_RENDER_CACHE=$cache REXBENCH_ADDR=127.0.0.1:$a "$srv" serve & pa=$!; pids+=("$pa")
  REXBENCH_RENDER_CACHE=$cache REXBENCH_ADDR=127.0.0.1:$b "$srv" serve & pb=$!; pids+=("$pb")
  wait_ready "http://127.0.0.1:$a"; wait_ready "http://127.0.0.1:$b"
  # A warm-up pass through every page on each, so both set-ups start from warm caches.
  while read -r path; do
    curl -sf -o /dev/null "http://127.0.0.1:$a$path"; curl -sf -o /dev/null "http://127.0.0.1:$b$path"
  done < "$work/paths"
  one=$(load "http://127.0.0.1:$a" "http://127.0.0.1:$a")
  two=$(load "http://127.0.0.1:$a" "http://127.0.0.1:$b")
  printf 'render cache %-3s  one process: %s; two processes: %s\n' "$cache" "$one" "$two"
  kill "$pa" "$pb"; wait "$pa" "$pb" 2>/dev/null || true
done
