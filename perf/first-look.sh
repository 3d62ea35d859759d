#!/usr/bin/env bash
# Benchmark: the first look, as a newcomer meets it. A fresh clone of this repository
# runs the README's `bash scripts/demo` with an empty cargo home, target and npm cache
# (CARGO_HOME, CARGO_TARGET_DIR, npm_config_cache: every crate downloaded, every crate
# and tool built), and this prints when each phase ended, in seconds from the start:
#
#   download     crates.io's index and the crates the server's demo build needs (until
#                cargo's first "Compiling" line: it downloads them all first)
#   build        the server's demo build (cargo's "Finished" line)
#   first page   http://127.0.0.1:PORT/ answers 200: the board, every page without islands
#   islands      the same page loads the islands (the WebAssembly built, wasm-bindgen's
#                CLI and binaryen installed, the server restarted with it)
#
# Usage: bash perf/first-look.sh [PORT] [REV]  (default 3311 and HEAD: REV to time an
#                                              earlier commit the same way)
#
# Rust's toolchain stays (RUSTUP_HOME is the toolchain itself; the wasm32 target is added
# to it by scripts/wasm when missing, so remove it first to time that too:
# `rustup target remove wasm32-unknown-unknown`). Figures: BENCHMARKS.md, "The first look".
set -euo pipefail
cd "$(dirname "$0")/.."
port=${1:-3311}
rev=${2:-HEAD}
command -v curl >/dev/null || { echo "perf/first-look.sh: needs curl" >&2; exit 1; }

work=$(mktemp -d "${TMPDIR:-/tmp}/rexbench-first-look.XXXXXX")
git clone --quiet . "$work/repo"
git -C "$work/repo" checkout --quiet "$(git rev-parse "$rev")"
mkdir -p "$work/cargo" "$work/npm"
log=$work/demo.log
pid=
finish() {
  if [ -n "$pid" ]; then
    kill -TERM -- "-$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
  fi
  rm -rf "$work"
}
trap finish EXIT

start=$(date +%s.%N)
# Its own process group, so that the end of this script ends the demo and its builds.
(
  cd "$work/repo"
  export CARGO_HOME=$work/cargo CARGO_TARGET_DIR=$work/target npm_config_cache=$work/npm
  export REXBENCH_ADDR=127.0.0.1:$port
  exec setsid bash scripts/demo
) > "$log" 2>&1 &
pid=$!

since() { awk -v s="$start" -v n="$(date +%s.%N)" 'BEGIN { printf "%.0f", n - s }'; }
download= build= first= islands=
url=http://127.0.0.1:$port/
while [ -z "$islands" ]; do
  if ! kill -0 "$pid" 2>/dev/null; then
    echo "perf/first-look.sh: scripts/demo ended before the islands were served; its output:" >&2
    tail -40 "$log" >&2
    exit 1
  fi
  [ -z "$download" ] && grep -q '^ *Compiling ' "$log" && download=$(since)
  [ -z "$build" ] && grep -q '^ *Finished ' "$log" && build=$(since)
  if [ -z "$first" ] && curl -sf -o /dev/null "$url"; then first=$(since); fi
  if [ -n "$first" ] && curl -sf "$url" 2>/dev/null | grep -q hydrateIslands; then islands=$(since); fi
  [ "$(since)" -lt 3600 ] || { echo "perf/first-look.sh: no islands within an hour" >&2; tail -40 "$log" >&2; exit 1; }
  sleep 1
done

echo "# the first look: a fresh clone, empty CARGO_HOME, CARGO_TARGET_DIR and npm cache ($(nproc) cores)"
echo "# $(git rev-parse --short "$rev"); cargo downloaded $(grep -c '^ *Downloaded ' "$log" || true) crates in all (the server, wasm-bindgen-cli, the WebAssembly)"
grep -m1 '^ *Finished ' "$log" | sed 's/^ */# cargo: /' || true
printf '%-12s %8s\n' phase "ended, s"
printf '%-12s %8s\n' download "${download:-?}" build "${build:-?}" "first page" "$first" islands "$islands"
