#!/usr/bin/env bash
# Benchmark: ingesting a bundle of 180 runs and about 20 MB of artifacts through
# POST /api/v1/submissions, against the floor of `gzip -d` of the same file plus
# `sha256sum` of its artifacts. Goal (issue 4): under 2x the floor.
# Runs on SQLite; also on PostgreSQL when BENCH_DATABASE_URL names a server database.
# Into a fresh database, or with BENCH_KEEP=DIR into the SQLite database that
# `BENCH_KEEP=DIR bash perf/serve.sh N` made and kept there (N synthetic agents: the
# ingest at scale, against the same floor); the three bundles are then added to it.
# Usage: bash perf/ingest.sh
set -euo pipefail
cd "$(dirname "$0")/.."
work=$(mktemp -d)
server_pid=""
cleanup() { [ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null; rm -rf "$work"; }
trap cleanup EXIT

cargo build --release -q -p rexbench-runner -p rexbench-server
rexbench=target/release/rexbench
srv=target/release/rexbench-server
$rexbench keygen --out "$work/key" >/dev/null
# Three bundles with different artifacts, so that every ingest stores all its blobs.
for i in 1 2 3; do
  SEED=$i python3 perf/gen_results.py "$work/results$i" 20 180 >/dev/null
  printf 'id = "bench-agent-%s"\nframework = "Bench"\nmodel = "Synthetic"\n' "$i" > "$work/agent.toml"
  $rexbench pack "$work/results$i" --agent "$work/agent.toml" --key "$work/key.pem" --out "$work/b$i.tar.gz" >/dev/null
done
artifacts_bytes=$(find "$work/results1" -type f ! -name run.json ! -name evaluation.json -printf '%s\n' | awk '{s+=$1} END {print s}')

seconds() { local s e; s=$(date +%s.%N); "$@" >/dev/null; e=$(date +%s.%N); echo "$e - $s" | bc -l; }
best_of() { local b=""; for t in "$@"; do if [ -z "$b" ] || (( $(echo "$t < $b" | bc -l) )); then b=$t; fi; done; echo "$b"; }

floor_gzip=$(best_of "$(seconds sh -c "gzip -dc $work/b1.tar.gz > /dev/null")" "$(seconds sh -c "gzip -dc $work/b1.tar.gz > /dev/null")" "$(seconds sh -c "gzip -dc $work/b1.tar.gz > /dev/null")")
sha() { find "$work/results1" -type f ! -name run.json ! -name evaluation.json -print0 | xargs -0 sha256sum; }
floor_sha=$(best_of "$(seconds sha)" "$(seconds sha)" "$(seconds sha)")
floor=$(echo "$floor_gzip + $floor_sha" | bc -l)
printf 'bundle: 180 runs, %.1f MB of artifacts, %.1f MB compressed\n' "$(echo "$artifacts_bytes/1000000" | bc -l)" "$(echo "$(stat -c %s "$work/b1.tar.gz")/1000000" | bc -l)"
printf 'floor: gzip -d %.3f s + sha256sum %.3f s = %.3f s\n' "$floor_gzip" "$floor_sha" "$floor"

run_on() {
  local name=$1 url=$2
  local port
  port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
  export DATABASE_URL=$url REXBENCH_BLOBS="${blobs:-$work/blobs-${name%% *}}" REXBENCH_ADDR="127.0.0.1:$port" RUST_LOG=warn \
    REXBENCH_SUBMISSIONS_PER_HOUR=1000000 REXBENCH_KEY_SUBMISSIONS_PER_HOUR=1000000
  $srv keys add --public-key "$work/key.pub.pem" --owner bench --tier maintainer >/dev/null
  $srv serve & server_pid=$!
  until curl -sf "http://127.0.0.1:$port/readyz" >/dev/null; do sleep 0.1; done
  local times=()
  # Each ingest makes its blobs durable with one syncfs, which also flushes whatever
  # else is waiting to be written on the file system (a build, the last benchmark's
  # files); flushing first measures the ingest's own writes.
  for i in 1 2 3; do
    sync
    times+=("$(seconds $rexbench submit "$work/b$i.tar.gz" --server "http://127.0.0.1:$port")")
  done
  local best; best=$(best_of "${times[@]}")
  printf '%-10s ingest (best of 3 new bundles): %.3f s = %.2fx the floor (goal < 2x)\n' "$name" "$best" "$(echo "$best / $floor" | bc -l)"
  kill "$server_pid"; wait "$server_pid" 2>/dev/null || true; server_pid=""
}
if [ -n "${BENCH_KEEP:-}" ]; then
  [ -f "$BENCH_KEEP/db.sqlite" ] || { echo "no database in $BENCH_KEEP: make it with BENCH_KEEP=$BENCH_KEEP bash perf/serve.sh N" >&2; exit 1; }
  agents=$(python3 -c 'import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute("SELECT COUNT(*) FROM agents").fetchone()[0])' "$BENCH_KEEP/db.sqlite")
  blobs=$BENCH_KEEP/blobs-sqlite
  run_on "sqlite ($agents agents)" "sqlite://$BENCH_KEEP/db.sqlite"
else
  blobs=""
  run_on sqlite "sqlite://$work/bench.db"
fi
if [ -n "${BENCH_DATABASE_URL:-}" ]; then blobs=""; run_on postgres "$BENCH_DATABASE_URL"; fi
