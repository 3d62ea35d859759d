#!/usr/bin/env bash
# Benchmark: verifying a bundle with ~200 MB of artifacts.
# Goals (issue 2): peak memory under 64 MiB; time within 2x of the floor, which is
# `gzip -d` of the bundle plus `sha256sum` over the same uncompressed artifact bytes.
# Usage: bash perf/bundle-verify.sh [MEGABYTES]   (default 200)
set -euo pipefail
cd "$(dirname "$0")/.."
mb=${1:-200}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

cargo build --release -q -p rexbench-runner
rexbench=target/release/rexbench
python3 perf/gen_results.py "$work/results" "$mb"
printf 'id = "bench-agent"\nframework = "Bench"\nmodel = "Synthetic"\n' > "$work/agent.toml"
$rexbench keygen --out "$work/key" >/dev/null
$rexbench pack "$work/results" --agent "$work/agent.toml" --key "$work/key.pem" --out "$work/bundle.tar.gz"
artifacts_bytes=$(find "$work/results" -type f ! -name run.json ! -name evaluation.json -printf '%s\n' | awk '{s+=$1} END {print s}')
bundle_bytes=$(stat -c %s "$work/bundle.tar.gz")

# Best of 3 wall-clock seconds for a command.
best() {
  local b=""
  for _ in 1 2 3; do
    local s e t
    s=$(date +%s.%N); "$@" >/dev/null; e=$(date +%s.%N)
    t=$(echo "$e - $s" | bc -l)
    if [ -z "$b" ] || (( $(echo "$t < $b" | bc -l) )); then b=$t; fi
  done
  echo "$b"
}

cat "$work/bundle.tar.gz" > /dev/null   # warm the page cache
t_verify=$(best $rexbench verify "$work/bundle.tar.gz" --trust "$work/key.pub.pem")
t_gzip=$(best sh -c "gzip -dc '$work/bundle.tar.gz' > /dev/null")
t_sha=$(best sh -c "find '$work/results' -type f ! -name run.json ! -name evaluation.json -print0 | xargs -0 sha256sum")
rss_kib=$(/usr/bin/time -f '%M' $rexbench verify "$work/bundle.tar.gz" --trust "$work/key.pub.pem" 2>&1 >/dev/null | tail -1)

floor=$(echo "$t_gzip + $t_sha" | bc -l)
ratio=$(echo "$t_verify / $floor" | bc -l)
printf 'artifacts:            %.1f MB uncompressed, bundle %.1f MB compressed\n' "$(echo "$artifacts_bytes/1000000" | bc -l)" "$(echo "$bundle_bytes/1000000" | bc -l)"
printf 'rexbench verify:      %.3f s (best of 3), peak RSS %.1f MiB (goal < 64 MiB)\n' "$t_verify" "$(echo "$rss_kib/1024" | bc -l)"
printf 'gzip -d:              %.3f s\n' "$t_gzip"
printf 'sha256sum artifacts:  %.3f s\n' "$t_sha"
printf 'verify / floor:       %.2fx (goal <= 2x)\n' "$ratio"
