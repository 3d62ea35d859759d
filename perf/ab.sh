#!/usr/bin/env bash
# Benchmark: two builds of the server, side by side, for a change meant to keep speed
# (a refactoring). Both serve their own copy of one database of AGENTS synthetic agents
# (default 300; `rexbench-server synth`, made once by the first build) with the render
# cache off, and each page and API answer is asked of them in turn, ROUNDS times
# (default 15), so that whatever else the machine does weighs on both alike. Prints the
# median cold time of each, and the ratio after/before.
# Usage: bash perf/ab.sh BEFORE_SERVER_BINARY AFTER_SERVER_BINARY [AGENTS] [ROUNDS]
set -euo pipefail
cd "$(dirname "$0")/.."
[ $# -ge 2 ] || { echo "usage: perf/ab.sh BEFORE AFTER [AGENTS] [ROUNDS]" >&2; exit 2; }
before=$(realpath "$1")
after=$(realpath "$2")
agents=${3:-300}
rounds=${4:-15}
work=$(mktemp -d)
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; rm -rf "$work"; }
trap cleanup EXIT
port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

mkdir -p "$work/seed"
DATABASE_URL="sqlite://$work/seed/db.sqlite" REXBENCH_BLOBS="$work/seed/blobs" REXBENCH_STAGING="$work/seed/staging" \
  RUST_LOG=warn "$before" synth --agents "$agents" >/dev/null
declare -A ports
for side in before after; do
  cp -r "$work/seed" "$work/$side"
  p=$(port)
  ports[$side]=$p
  binary=$before
  [ "$side" = after ] && binary=$after
  DATABASE_URL="sqlite://$work/$side/db.sqlite" REXBENCH_BLOBS="$work/$side/blobs" \
    REXBENCH_STAGING="$work/$side/staging" REXBENCH_ADDR="127.0.0.1:$p" REXBENCH_RENDER_CACHE=off \
    RUST_LOG=warn "$binary" serve >"$work/$side.log" 2>&1 &
  pids+=($!)
  for _ in $(seq 1 300); do curl -fsS "http://127.0.0.1:$p/readyz" >/dev/null 2>&1 && break; sleep 0.2; done
done
python3 - "${ports[before]}" "${ports[after]}" "$rounds" <<'PY'
import json, statistics, sys, time, urllib.request
before, after, rounds = sys.argv[1], sys.argv[2], int(sys.argv[3])
def get(port, path):
    start = time.perf_counter()
    with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=120) as r:
        r.read()
    return (time.perf_counter() - start) * 1000
rows = json.load(urllib.request.urlopen(f"http://127.0.0.1:{before}/api/v1/leaderboard"))["rows"]
agent = rows[len(rows) // 2]["agent_id"]
import re
page = urllib.request.urlopen(f"http://127.0.0.1:{before}/agents/{agent}").read().decode()
run = re.search(r'href="/runs/(\d+)"', page).group(1)
paths = ["/", "/?tasks=public", "/?sort=every-none", "/?integrity=strict", "/tasks", "/tasks/cogs",
         f"/agents/{agent}", "/failures", f"/compare?a={rows[0]['agent_id']}&b={agent}",
         f"/parity?a={agent}&b={rows[1]['agent_id']}", "/changes",
         "/api/v1/leaderboard", "/api/v1/leaderboard?tasks=public", "/leaderboard.csv",
         f"/api/v1/agents/{agent}", "/api/v1/tasks", "/api/v1/tasks/cogs", f"/runs/{run}", f"/api/v1/runs/{run}"]
print(f"{'answer':42} {'before ms':>10} {'after ms':>10} {'after/before':>13}")
for path in paths:
    get(before, path); get(after, path)  # warm the database's pages, not the answer
    times = {before: [], after: []}
    for _ in range(rounds):
        for port in (before, after):
            times[port].append(get(port, path))
    b, a = statistics.median(times[before]), statistics.median(times[after])
    print(f"{path[:42]:42} {b:10.1f} {a:10.1f} {a / b:13.2f}")
PY
