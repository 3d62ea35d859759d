#!/usr/bin/env bash
# Benchmark: serving at scale (issue 7). On a database of N synthetic agents (default
# 1,000) × 12 tasks × 3 conditions × 5 runs, made through the normal ingest path:
#   a. the leaderboard's throughput and p50/p99 latency with 64 connections (wrk),
#      beside nginx serving the same HTML bytes as a static file: as is, and
#      brotli-compressed as browsers ask for it (nginx serving the server's own .br
#      bytes with brotli_static);
#   b. cold renders (render cache off) of every page (the median of five after a first,
#      which makes what the store keeps until the data change, timed apart): the leaderboard (as it is, ordered
#      by cost, of public tasks, its last page), an agent, the tasks, a task (and its
#      second page), a run with its trajectory, the failures, a comparison, the changes,
#      the keys, the submit and about pages; and of every answer of the API that reads
#      (the maintainers' with the admin token), an artifact and the CSV; the slowest
#      three, with the statements each sends and their query plans (perf/plans.sh); the
#      server's memory after them;
#   c. ingest throughput of the demo bundles against gzip -d + sha256sum of them;
#   d. the server's memory after loading the data and serving (a): its own (anonymous)
#      and resident, with the mapped database pages resident counts.
# On SQLite, and on PostgreSQL when BENCH_DATABASE_URL names an empty database.
# Needs wrk and nginx (Debian: apt-get install wrk nginx libnginx-mod-http-brotli-static).
# BENCH_ONLY=b measures (b) alone, on a database it makes once and keeps in BENCH_KEEP
# (a folder; made on the first run): a quick rerun after a change to a page.
# BENCH_POSTGRES_ONLY=1 measures PostgreSQL alone (with BENCH_DATABASE_URL).
# Usage: bash perf/serve.sh [AGENTS]
set -euo pipefail
cd "$(dirname "$0")/.."
agents=${1:-1000}
tools=(curl python3 bc)
[ "${BENCH_ONLY:-}" = b ] || tools+=(wrk nginx)
for tool in "${tools[@]}"; do
  command -v "$tool" >/dev/null || { echo "perf/serve.sh needs $tool (apt-get install $tool)" >&2; exit 1; }
done
brotli_module=/usr/lib/nginx/modules/ngx_http_brotli_static_module.so
[ "${BENCH_ONLY:-}" = b ] || [ -f "$brotli_module" ] \
  || { echo "perf/serve.sh needs nginx's brotli_static (apt-get install libnginx-mod-http-brotli-static)" >&2; exit 1; }
work=$(mktemp -d)
# nginx's workers run as nobody: they must be able to read the files they serve.
chmod 755 "$work"
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; rm -rf "$work"; }
trap cleanup EXIT

cargo build --release -q -p rexbench-server -p rexbench-runner
srv=$PWD/target/release/rexbench-server
rexbench=$PWD/target/release/rexbench
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
# Ready once the board's reads are made (seconds, at 10,000 agents).
wait_ready() { for _ in $(seq 1200); do curl -sf "$1/readyz" >/dev/null && return 0; sleep 0.1; done; echo "server not ready" >&2; exit 1; }
# The start's garbage collection lists every blob (minutes, for millions): the cold
# renders are measured after it, on a quiet server.
wait_collected() { until curl -sf -H "Authorization: Bearer bench-admin" "$1/metrics" | grep -qx 'rexbench_start_collection_pending 0'; do sleep 0.5; done; }
ms() { python3 -c "import sys; print(f'{float(sys.argv[1])*1000:.1f}')" "$1"; }

# wrk's summary: requests/s, p50, p99. Further arguments go to wrk (headers).
load() {
  local url=$1; shift
  wrk -t2 -c64 -d"${BENCH_SECONDS:-10}"s --latency "$@" "$url" > "$work/wrk.txt"
  # Error answers are small and fast: a run that got any measured the wrong thing.
  if grep -q 'Non-2xx' "$work/wrk.txt"; then echo "$url answered errors under load:" >&2; cat "$work/wrk.txt" >&2; exit 1; fi
  local rps p50 p99
  rps=$(awk '/Requests\/sec/ {print $2}' "$work/wrk.txt")
  p50=$(awk '$1 == "50%" {print $2}' "$work/wrk.txt")
  p99=$(awk '$1 == "99%" {print $2}' "$work/wrk.txt")
  echo "$rps $p50 $p99"
}

# The demo bundles for (c), as `serve --demo` makes them: the paper's results
# (`rexbench import-published`) and the example tasks evaluated by the runner.
if [ "${BENCH_ONLY:-}" != b ]; then
$rexbench keygen --out "$work/demo-key" >/dev/null
$rexbench import-published --key "$work/demo-key.pem" --out "$work/demo" >/dev/null 2>&1
$rexbench evaluate tasks/examples/outputs --out "$work/examples" --gold tasks/examples/gold --jobs 2 >/dev/null 2>&1
printf 'id = "example-agent"\nframework = "Example"\nmodel = "Example"\n' > "$work/agent.toml"
$rexbench pack "$work/examples" --agent "$work/agent.toml" --key "$work/demo-key.pem" --out "$work/demo/examples.tar.gz" >/dev/null
# The floor: decompress each bundle and hash what comes out, best of three.
floor() { local s; s=$(date +%s.%N); for f in "$work"/demo/*.tar.gz; do gzip -dc "$f" | sha256sum >/dev/null; done; echo "$(date +%s.%N) - $s" | bc -l; }
floor=$(printf '%s\n' "$(floor)" "$(floor)" "$(floor)" | sort -n | head -1)
fi
# Posts every demo bundle in turn from one process over one connection, as an
# uploader of many bundles would, so that neither process start-up nor connecting is
# counted; each must be acknowledged (stored, durably) before the next is sent.
# Prints the seconds taken.
submit_all() {
  python3 - "$1" "$work"/demo/*.tar.gz <<'PY'
import http.client, sys, time
port, files = int(sys.argv[1]), sys.argv[2:]
bodies = [open(f, "rb").read() for f in files]
conn = http.client.HTTPConnection("127.0.0.1", port)
start = time.perf_counter()
for body in bodies:
    conn.request("POST", "/api/v1/submissions", body=body, headers={"Content-Type": "application/gzip"})
    r = conn.getresponse()
    r.read()
    assert r.status in (200, 201), r.status
print(f"{time.perf_counter() - start:.4f}")
PY
}

run_on() {
  local name=$1 url=$2
  echo "== $name"
  # One benchmark client submits every bundle: no rate limit is being measured.
  export DATABASE_URL=$url REXBENCH_BLOBS="$work/blobs-$name" REXBENCH_TASKS=$PWD/tasks RUST_LOG=warn \
    REXBENCH_SUBMISSIONS_PER_HOUR=1000000 REXBENCH_KEY_SUBMISSIONS_PER_HOUR=1000000
  if [ -n "${BENCH_KEEP:-}" ]; then export REXBENCH_BLOBS="$BENCH_KEEP/blobs-$name"; fi
  local started
  if [ -n "${BENCH_KEEP:-}" ] && [ -f "$BENCH_KEEP/$name.made" ]; then
    echo "synthetic data: kept in $BENCH_KEEP ($(cat "$BENCH_KEEP/$name.made"))"
  else
    started=$(date +%s.%N)
    "$srv" synth --agents "$agents" >/dev/null
    printf 'synthetic data: %s agents ingested in %.0f s\n' "$agents" "$(echo "$(date +%s.%N) - $started" | bc -l)"
    if [ -n "${BENCH_KEEP:-}" ]; then echo "$agents agents" > "$BENCH_KEEP/$name.made"; fi
  fi
  local port pid
  if [ "${BENCH_ONLY:-}" != b ]; then
  # (a) and (d): the cached server under load, beside nginx with the same bytes.
  port=$(free_port)
  REXBENCH_ADDR=127.0.0.1:$port "$srv" serve & pid=$!; pids+=("$pid")
  wait_ready "http://127.0.0.1:$port"
  mkdir -p "$work/www-$name"
  curl -sf "http://127.0.0.1:$port/" -o "$work/www-$name/index.html"
  curl -sf -H 'Accept-Encoding: br' "http://127.0.0.1:$port/" -o "$work/www-$name/index.html.br"
  local nport; nport=$(free_port)
  cat > "$work/nginx-$name.conf" <<CONF
load_module $brotli_module;
worker_processes auto;
pid $work/nginx-$name.pid;
error_log $work/nginx-$name.err;
events { worker_connections 1024; }
http {
  access_log off;
  include /etc/nginx/mime.types;
  brotli_static on;
  server { listen 127.0.0.1:$nport; root $work/www-$name; }
}
CONF
  nginx -c "$work/nginx-$name.conf" -p "$work"
  # nginx must serve exactly the server's bytes, as they are and compressed.
  curl -sf "http://127.0.0.1:$nport/index.html" | cmp -s - "$work/www-$name/index.html" \
    || { echo "nginx does not serve the page's bytes" >&2; exit 1; }
  curl -sf -H 'Accept-Encoding: br' "http://127.0.0.1:$nport/index.html" | cmp -s - "$work/www-$name/index.html.br" \
    || { echo "nginx does not serve the page's .br bytes" >&2; exit 1; }
  local encoding
  for encoding in identity br; do
    read -r rps p50 p99 < <(load "http://127.0.0.1:$port/" -H "Accept-Encoding: $encoding")
    read -r nrps np50 np99 < <(load "http://127.0.0.1:$nport/index.html" -H "Accept-Encoding: $encoding")
    local file="$work/www-$name/index.html"; [ "$encoding" = br ] && file+=.br
    printf 'a. leaderboard, %s (%s bytes), 64 connections: server %s req/s (p50 %s, p99 %s); nginx %s req/s (p50 %s, p99 %s); %.0f%% of nginx\n' \
      "$encoding" "$(stat -c %s "$file")" "$rps" "$p50" "$p99" "$nrps" "$np50" "$np99" "$(echo "100 * $rps / $nrps" | bc -l)"
  done
  nginx -c "$work/nginx-$name.conf" -p "$work" -s stop
  # Resident memory counts the pages of the database file that SQLite reads through
  # its memory map: the kernel's page cache, shared and reclaimable, which read(2)
  # would fill as well without their being counted. What the server itself holds is
  # its anonymous memory; both are shown.
  local rss hwm anon file
  rss=$(awk '/VmRSS/ {print $2}' "/proc/$pid/status"); hwm=$(awk '/VmHWM/ {print $2}' "/proc/$pid/status")
  anon=$(awk '/RssAnon/ {print $2}' "/proc/$pid/status"); file=$(awk '/RssFile/ {print $2}' "/proc/$pid/status")
  printf 'd. server memory after loading and serving: own (anonymous) %.0f MB; resident %.0f MB (peak %.0f MB), of which %.0f MB mapped files\n' \
    "$(echo "$anon/1024" | bc -l)" "$(echo "$rss/1024" | bc -l)" "$(echo "$hwm/1024" | bc -l)" "$(echo "$file/1024" | bc -l)"
  kill "$pid"; wait "$pid" 2>/dev/null || true
  fi

  # (b): every request rendered afresh: each page, and each answer of the API (the
  # maintainers' too, with the admin token), slowest first at the end.
  port=$(free_port)
  REXBENCH_ADMIN_TOKEN=bench-admin REXBENCH_RENDER_CACHE=off REXBENCH_ADDR=127.0.0.1:$port "$srv" serve & pid=$!; pids+=("$pid")
  wait_ready "http://127.0.0.1:$port"
  wait_collected "http://127.0.0.1:$port"
  local run; run=$(curl -sf "http://127.0.0.1:$port/agents/synthetic-00000?task=cogs&hint=none" | grep -o 'href="/runs/[0-9]*"' | head -1 | grep -o '[0-9]*')
  local bundle; bundle=$(curl -sf "http://127.0.0.1:$port/api/v1/agents/synthetic-00000" | python3 -c 'import json,sys; print(json.load(sys.stdin)["submissions"][0]["bundle_id"])')
  local digest; digest=$(curl -sf "http://127.0.0.1:$port/api/v1/runs/$run" | python3 -c 'import json,sys; print(json.load(sys.stdin)["artifacts"][0]["digest"])')
  local timings="$work/timings-$name"; : > "$timings"
  for path in / "/?sort=cost-none" "/?tasks=public" "/?page=$(( (agents + 49) / 50 ))" /agents/synthetic-00000 /tasks /tasks/cogs \
      "/tasks/cogs?page=2" "/runs/$run" /failures "/compare?a=synthetic-00000&b=synthetic-00001" /changes /keys /submit /about \
      /leaderboard.csv /api/v1/leaderboard "/api/v1/leaderboard?page=2" /api/v1/agents/synthetic-00000 /api/v1/tasks /api/v1/tasks/cogs \
      "/api/v1/runs/$run" /api/v1/changes /api/v1/keys /api/v1/sampling "/api/v1/submissions/$bundle/envelope" \
      "/api/v1/submissions/$bundle/sample" "/artifacts/$digest" /api/v1/openapi.json \
      /api/v1/admin/findings /api/v1/admin/reproductions /api/v1/admin/outputs /api/v1/admin/access-log /api/v1/admin/keys; do
    # The maintainers' answers, and an output of a task whose outputs are private, as a maintainer.
    local auth=(); case $path in /api/v1/admin/*|/artifacts/*) auth=(-H 'Authorization: Bearer bench-admin');; esac
    # The first answer also makes what the store keeps until the data change (the
    # board's rows, the statistics), and warms the database's own caches.
    local first
    first=$(curl -sf "${auth[@]}" "http://127.0.0.1:$port$path" -o /dev/null -w '%{time_total}') \
      || { echo "$path did not answer 200" >&2; exit 1; }
    local times=()
    for _ in 1 2 3 4 5; do times+=("$(curl -sf "${auth[@]}" -o /dev/null -w '%{time_total}' "http://127.0.0.1:$port$path")"); done
    local median; median=$(printf '%s\n' "${times[@]}" | sort -n | sed -n 3p)
    printf 'b. cold render %-60s %6s ms (median of 5; the first: %s ms)\n' "$path" "$(ms "$median")" "$(ms "$first")" | tee -a "$timings"
  done
  echo "b. the slowest three:"; sort -k5 -n -r "$timings" | head -3 | sed 's/^b. cold render /   /'
  local rss anon
  rss=$(awk '/VmRSS/ {print $2}' "/proc/$pid/status"); anon=$(awk '/RssAnon/ {print $2}' "/proc/$pid/status")
  printf 'b. server memory after answering them: own (anonymous) %.0f MB, resident %.0f MB\n' \
    "$(echo "$anon/1024" | bc -l)" "$(echo "$rss/1024" | bc -l)"
  kill "$pid"; wait "$pid" 2>/dev/null || true
  # The statements of the slowest three, each with its query plan (perf/plans.sh).
  local slowest; mapfile -t slowest < <(sort -k5 -n -r "$timings" | head -3 | awk '{print $4}')
  echo "b. the slowest three's statements and query plans:"
  BENCH_KEEP="" BENCH_DATABASE_URL="" bash perf/plans.sh "${slowest[@]}" | sed 's/^/   /'

  [ "${BENCH_ONLY:-}" = b ] && return
  # (c): the demo bundles through the API, one after another, into a fresh database.
  if [ "$name" = sqlite ]; then
    export DATABASE_URL="sqlite://$work/demo-$name.db"
  fi
  port=$(free_port)
  REXBENCH_BLOBS="$work/demo-blobs-$name" REXBENCH_ADDR=127.0.0.1:$port "$srv" serve & pid=$!; pids+=("$pid")
  wait_ready "http://127.0.0.1:$port"
  "$srv" keys add --public-key "$work/demo-key.pub.pem" --owner demo --tier maintainer >/dev/null
  local took; took=$(submit_all "$port")
  printf 'c. demo bundles (%s): ingest %.3f s; floor gzip -d + sha256sum %.3f s; %.2fx the floor\n' \
    "$(ls "$work"/demo/*.tar.gz | wc -l)" "$took" "$floor" "$(echo "$took / $floor" | bc -l)"
  kill "$pid"; wait "$pid" 2>/dev/null || true
}

if [ -n "${BENCH_POSTGRES_ONLY:-}" ]; then
  :
elif [ -n "${BENCH_KEEP:-}" ]; then
  mkdir -p "$BENCH_KEEP"
  run_on sqlite "sqlite://$BENCH_KEEP/db.sqlite"
else
  run_on sqlite "sqlite://$work/db.sqlite"
fi
if [ -n "${BENCH_DATABASE_URL:-}" ]; then
  run_on postgres "$BENCH_DATABASE_URL"
fi
