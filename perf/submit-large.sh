#!/usr/bin/env bash
# Benchmark: /submit with a 200 MB bundle in a real browser (issue 17). The bundle's
# artifacts are random text, so it is about 200 MB compressed. Measures, in Debian's
# Chromium driven by Playwright (perf/submit-large.mjs): the check in the browser
# (its time, the page's longest frame while it runs, and Chromium's memory beside the
# file's size), then the upload (its time, the progress events the page showed, and
# the server's answer).
# Usage: bash perf/submit-large.sh [MEGABYTES]   (default 200)
set -euo pipefail
cd "$(dirname "$0")/.."
mb=${1:-200}
work=$(mktemp -d)
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; rm -rf "$work"; }
trap cleanup EXIT
bash scripts/wasm
cargo build --release -q -p rexbench-server -p rexbench-runner
srv=$PWD/target/release/rexbench-server
rexbench=$PWD/target/release/rexbench

# About 1.35 × MB of base64 text, which gzip leaves about 0.75 of: MB compressed.
python3 - "$work/results" "$mb" <<'PY'
import base64, json, os, sys
out, mb = sys.argv[1], int(sys.argv[2])
os.makedirs(out)
json.dump({"benchmark": {"name": "RExBench", "version": "1.0", "task_set_digest": "ab" * 32}},
          open(os.path.join(out, "evaluation.json"), "w"))
left, i = int(mb * 1.35e6), 0
tasks = ["cogs", "othello", "winodict", "checkeval", "re-reading", "implicit-ins"]
while left > 0:
    d = os.path.join(out, "runs", tasks[i % 6], "none", str(i // 6 + 1))
    os.makedirs(d)
    size = min(left, 40_000_000)
    with open(os.path.join(d, "stdout.txt"), "wb") as f:
        while size > 0:
            chunk = base64.encodebytes(os.urandom(min(size, 3 << 20) * 3 // 4 + 3))[: min(size, 4 << 20)]
            f.write(chunk)
            size -= len(chunk)
            left -= len(chunk)
    json.dump({"outcome": "wrong_result", "metrics": {}}, open(os.path.join(d, "run.json"), "w"))
    i += 1
PY
printf 'id = "large-agent"\nframework = "Bench"\nmodel = "Large"\n' > "$work/agent.toml"
$rexbench keygen --out "$work/key" >/dev/null
$rexbench pack "$work/results" --agent "$work/agent.toml" --key "$work/key.pem" --out "$work/large.tar.gz" >/dev/null
rm -rf "$work/results"
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
export DATABASE_URL="sqlite://$work/db.sqlite" REXBENCH_BLOBS="$work/blobs" REXBENCH_ADDR="127.0.0.1:$port" RUST_LOG=warn
$srv keys add --public-key "$work/key.pub.pem" --owner Bench --tier submitter >/dev/null
$srv serve & pids+=($!)
for _ in $(seq 300); do curl -sf "http://127.0.0.1:$port/readyz" >/dev/null && break; sleep 0.1; done
node perf/submit-large.mjs "http://127.0.0.1:$port" "$work/large.tar.gz"
