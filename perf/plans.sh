#!/usr/bin/env bash
# Benchmark aid: the statements a cold render of each PATH sends to the database, each with
# its query plan, on a database `perf/serve.sh` made and kept (BENCH_KEEP=DIR: its SQLite
# database and blobs; with BENCH_DATABASE_URL, that PostgreSQL database and
# DIR/blobs-postgres instead). Each path is asked once first (which makes what the store
# keeps until the data change, as in perf/serve.sh's medians), then once more: the
# statements of that second answer are the ones shown, with sqlx's time for each
# (BENCH_PLANS_FIRST=1: those of the first answer, which makes what the store keeps).
#   - SQLite: `EXPLAIN QUERY PLAN` of each statement, by the sqlite3 shell.
#   - PostgreSQL: the plan PostgreSQL itself chose for that very call, with its
#     parameters (auto_explain, sent back to the server as a notice).
# Usage: BENCH_KEEP=DIR [BENCH_DATABASE_URL=postgres://…] bash perf/plans.sh PATH...
# (perf/serve.sh calls it for its slowest three, with DATABASE_URL and REXBENCH_BLOBS.)
set -euo pipefail
cd "$(dirname "$0")/.."
[ $# -gt 0 ] || { echo "usage: BENCH_KEEP=DIR bash perf/plans.sh PATH..." >&2; exit 1; }
if [ -n "${BENCH_KEEP:-}" ]; then
  source perf/kept.sh
  kept_database
  base=$url
else
  # As perf/serve.sh calls it: the database and blobs it is serving.
  base=${DATABASE_URL:?BENCH_KEEP names the folder perf/serve.sh kept its database in} blobs=${REXBENCH_BLOBS:?}
fi
case $base in
  postgres*)
    backend=postgres
    joint='?'; case $base in *'?'*) joint='&';; esac
    url="$base${joint}options=-c%20session_preload_libraries%3Dauto_explain%20-c%20auto_explain.log_min_duration%3D0%20-c%20auto_explain.log_level%3Dnotice"
    ;;
  *)
    backend=sqlite url=$base
    command -v sqlite3 >/dev/null || { echo "perf/plans.sh needs sqlite3 (apt-get install sqlite3)" >&2; exit 1; }
    ;;
esac
work=$(mktemp -d)
pid=""
cleanup() { [ -n "$pid" ] && kill "$pid" 2>/dev/null; rm -rf "$work"; }
trap cleanup EXIT

cargo build --release -q -p rexbench-server -p rexbench-runner
srv=$PWD/target/release/rexbench-server
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
DATABASE_URL=$url REXBENCH_BLOBS=$blobs REXBENCH_TASKS=$PWD/tasks REXBENCH_ADDR=127.0.0.1:$port \
  REXBENCH_RENDER_CACHE=off REXBENCH_ADMIN_TOKEN=bench-admin NO_COLOR=1 \
  RUST_LOG=warn,sqlx::query=debug,sqlx::postgres::notice=info "$srv" serve 2>"$work/log" & pid=$!
until curl -sf "http://127.0.0.1:$port/readyz" >/dev/null; do
  kill -0 "$pid" 2>/dev/null || { cat "$work/log" >&2; exit 1; }
  sleep 0.1
done
# The start's own reads end before the first answer is asked: its garbage collection
# (every blob listed, 500 names a statement), then 3 s with no statement in the log but
# the server's poll of the change log (once a second, on every server; with its plan, on
# PostgreSQL).
until curl -sf -H "Authorization: Bearer bench-admin" "http://127.0.0.1:$port/metrics" | grep -qx 'rexbench_start_collection_pending 0'; do sleep 0.5; done
quiet=0 lines=-1
while [ "$quiet" -lt 30 ]; do
  now=$(grep 'sqlx::query' "$work/log" | grep -vc 'FROM changes' || true)
  if [ "$now" = "$lines" ]; then quiet=$((quiet + 1)); else quiet=0 lines=$now; fi
  sleep 0.1
done

for path in "$@"; do
  auth=(); case $path in /api/v1/admin/*|/artifacts/*) auth=(-H 'Authorization: Bearer bench-admin');; esac
  if [ -z "${BENCH_PLANS_FIRST:-}" ]; then
    curl -sf "${auth[@]}" -o /dev/null "http://127.0.0.1:$port$path" || { echo "$path did not answer 200" >&2; exit 1; }
    sleep 1
  fi
  # What the server wrote before the answer is left behind; what it writes for it is the
  # answer's own.
  from=$(wc -c < "$work/log")
  ms=$(curl -sf "${auth[@]}" -o /dev/null -w '%{time_total}' "http://127.0.0.1:$port$path")
  sleep 0.5
  tail -c +"$((from + 1))" "$work/log" > "$work/answer.log"
  python3 - "$path" "$ms" "$work/answer.log" "$backend" "$url" <<'PY'
import re, subprocess, sys

path, seconds, log, backend, url = sys.argv[1:6]
text_of_log = open(log, encoding="utf-8", errors="replace").read()
# One event per line that starts with a time; a notice's message (auto_explain's plan)
# runs on over the lines after it.
events = []
for line in text_of_log.splitlines():
    if re.match(r"\d{4}-\d\d-\d\dT", line) or not events:
        events.append(line)
    else:
        events[-1] += "\n" + line

def field(line, name):
    m = re.search(name + r'="((?:[^"\\]|\\.)*)"', line)
    if not m:
        return None
    return m.group(1).encode().decode("unicode_escape")

def text(line):
    statement = field(line, r"db\.statement") or ""
    return " ".join((statement.strip() or field(line, "summary") or "").split())

print(f"== {path}: answered in {float(seconds) * 1000:.1f} ms")
# A new connection's settings (PRAGMA …) are the pool's, not the answer's.
queries = [(i, e) for i, e in enumerate(events) if "sqlx::query" in e and not text(e).upper().startswith("PRAGMA")]
if not queries:
    print("   no statement: every read came from what the store keeps")
plan_used = set()
for n, (i, event) in enumerate(queries, 1):
    elapsed = re.search(r"elapsed=(\S+)", event)
    rows = re.search(r"rows_returned=(\d+)", event)
    sql = text(event)
    print(f"-- statement {n}: {elapsed.group(1) if elapsed else '?'}, {rows.group(1) if rows else '?'} rows")
    print("   " + sql)
    if backend == "postgres":
        # auto_explain's notice comes before sqlx's line for the statement it ran.
        notices = [j for j in range(i) if "sqlx::postgres::notice" in events[j] and j not in plan_used]
        if notices:
            plan_used.add(notices[-1])
            plan = events[notices[-1]].split("sqlx::postgres::notice:", 1)[1]
            plan = plan.split("Query Parameters:")[0] if "Query Parameters:" in plan else plan
            plan_lines = [l for l in plan.splitlines() if l.strip() and not l.lstrip().startswith("Query Text")]
            print("   plan: " + "\n         ".join(plan_lines))
    else:
        db = url.removeprefix("sqlite://").split("?")[0]
        out = subprocess.run(["sqlite3", "-readonly", db, "EXPLAIN QUERY PLAN " + sql],
                             capture_output=True, text=True)
        print("   plan: " + "\n         ".join((out.stdout or out.stderr).strip().splitlines()))
PY
done
