#!/usr/bin/env bash
# Benchmark: Lighthouse (performance, accessibility, best practices; its default mobile
# profile, simulated throttling) on the demo's pages with JavaScript, in Debian's
# Chromium, against the release server. Installs Lighthouse into perf/lighthouse.
# Usage: bash perf/lighthouse.sh [PATH …]   (default: /)
set -euo pipefail
cd "$(dirname "$0")/.."
paths=("${@:-/}")
work=$(mktemp -d)
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; rm -rf "$work"; }
trap cleanup EXIT
(cd perf/lighthouse && npm ci --no-audit --no-fund --silent)
bash scripts/wasm
cargo build --release -q -p rexbench-server
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
(cd "$work" && REXBENCH_ADDR="127.0.0.1:$port" RUST_LOG=warn exec "$OLDPWD/target/release/rexbench-server" serve --demo) & pids+=($!)
for _ in $(seq 600); do curl -sf "http://127.0.0.1:$port/readyz" >/dev/null && break; sleep 0.1; done
for path in "${paths[@]}"; do
  CHROME_PATH=${CHROMIUM:-/usr/bin/chromium} perf/lighthouse/node_modules/.bin/lighthouse "http://127.0.0.1:$port$path" \
    --quiet --only-categories=performance,accessibility,best-practices --output=json --output-path="$work/report.json" \
    --chrome-flags="--headless=new --no-sandbox --disable-gpu --disable-background-networking --disable-component-update --disable-sync --no-first-run"
  python3 - "$work/report.json" "$path" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
scores = ", ".join(f"{c['title'].lower()} {round(c['score'] * 100)}" for c in r["categories"].values())
a = r["audits"]
print(f"{sys.argv[2]}: {scores}; total blocking time {a['total-blocking-time']['displayValue']}, "
      f"layout shift {a['cumulative-layout-shift']['displayValue']}, "
      f"largest contentful paint {a['largest-contentful-paint']['displayValue']}")
PY
done
