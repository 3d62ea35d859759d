#!/usr/bin/env bash
# Benchmark: what the provenance record costs (issue 39): the wall time of an
# experiment traced (the process keeper and strace, as every run is) against the same
# experiment untraced (REXBENCH_STRACE=off: the keeper alone), as the runner measures
# it (run.json's duration_s), under the local executor and under Slurm (a real
# single-node cluster of this machine, scripts/slurm):
#   cpu    a CPU-bound experiment of SECONDS (default 60): fixed work, calibrated once;
#   files  an experiment that opens and reads 10,000 data files, with work per file
#          calibrated so that the whole takes SECONDS: a data loader;
#   opens  the worst case: the same 10,000 files opened and read with no other work,
#          to give the cost of one traced open.
# Each REPS times (default 2), traced and untraced alternately. Needs root and Slurm's
# packages for the Slurm half (scripts/setup installs them); SLURM=0 skips it, and
# ONLY="files opens" runs only those experiments.
# Usage: bash perf/provenance.sh [SECONDS] [REPS]
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-60}
reps=${2:-2}
work=$(mktemp -d)
cluster=$work/cluster
cleanup() { bash scripts/slurm stop "$cluster" >/dev/null 2>&1 || true; rm -rf "$work"; }
trap cleanup EXIT

cargo build --release -q -p rexbench-runner
rexbench=$PWD/target/release/rexbench
py=$(command -v python3)

# The work per unit, calibrated untraced: units that take about SECONDS in all.
cat > "$work/unit.py" <<'EOF'
def unit():
    s = 0
    for i in range(20000):
        s += i * i
    return s
EOF
units=$(cd "$work" && "$py" -c "
import time, unit
t = time.perf_counter(); n = 0
while time.perf_counter() - t < 2.0:
    unit.unit(); n += 1
print(int(n / (time.perf_counter() - t) * $seconds))")
echo "calibrated: $units units of work take about ${seconds} s here"

# Three tasks, each a card and a codebase; the patch adds a comment.
mktask() {
  local id=$1 script=$2
  mkdir -p "$work/tasks/$id/codebase"
  cat > "$work/tasks/$id/task.toml" <<EOF
id = "$id"
name = "Benchmark: $id"
outputs = "public"
extension_type = "Algorithm"
summary = "The provenance benchmark's $id experiment."
public_expected = ["done"]

[evaluation]
command = ["$py", "run.py"]
timeout_s = $((seconds * 4 + 60))
codebase = "codebase"

[[check.metrics]]
name = "done"
regex = '(?m)^DONE: (\S+)$'
occurrence = "once"
equals = 1.0
EOF
  printf 'inputs = ["data/**"]\n' > "$work/tasks/$id/integrity.toml"
  cp "$work/unit.py" "$work/tasks/$id/codebase/"
  printf '%s\n' "$script" > "$work/tasks/$id/codebase/run.py"
  mkdir -p "$work/outputs/$id/none/1"
  printf -- '--- a/run.py\n+++ b/run.py\n@@ -1 +1,2 @@\n+# benchmark\n %s\n' "$(head -1 "$work/tasks/$id/codebase/run.py")" \
    > "$work/outputs/$id/none/1/patch.diff"
}
mktask cpu "import unit
for _ in range($units): unit.unit()
print('DONE: 1.0')"
per_file=$((units / 10000 + 1))
mktask files "import os, unit
for name in sorted(os.listdir('data')):
    with open(os.path.join('data', name)) as f: f.read()
    for _ in range($per_file): unit.unit()
print('DONE: 1.0')"
mktask opens "import os
for name in sorted(os.listdir('data')):
    with open(os.path.join('data', name)) as f: f.read()
print('DONE: 1.0')"
for id in files opens; do
  mkdir -p "$work/tasks/$id/codebase/data"
  (cd "$work/tasks/$id/codebase/data" && for i in $(seq -w 1 10000); do echo "row $i" > "f$i.txt"; done)
done

# One evaluation of task ID: its experiment's duration_s, and whether it was traced.
run() {
  local id=$1 mode=$2 executor=$3 out
  out=$work/results-$id-$mode-$executor-$RANDOM
  mkdir -p "$work/only-$id" && rm -rf "$work/only-$id"/* && cp -r "$work/outputs/$id" "$work/only-$id/"
  local env=()
  [ "$mode" = untraced ] && env=(REXBENCH_STRACE=off)
  env "${env[@]}" "$rexbench" evaluate "$work/only-$id" --out "$out" --tasks "$work/tasks" \
    --executor "$executor" >/dev/null 2>&1
  "$py" - "$out/runs/$id/none/1" <<'EOF'
import json, sys
d = sys.argv[1]
run = json.load(open(f"{d}/run.json"))
record = json.load(open(f"{d}/x-provenance.json"))
assert run["outcome"] == "success", run
print(run["duration_s"], "traced" if record["tracer"] else "untraced", len(record["processes"]))
EOF
}

bench() {
  local executor=$1
  echo "== executor: $executor"
  for id in ${ONLY:-cpu files opens}; do
    local traced=() untraced=()
    for _ in $(seq "$reps"); do
      read -r u _ _ < <(run "$id" untraced "$executor"); untraced+=("$u")
      read -r t _ n < <(run "$id" traced "$executor"); traced+=("$t")
    done
    "$py" - "$id" "${untraced[*]}" "${traced[*]}" <<'EOF'
import statistics, sys
id, u, t = sys.argv[1], [float(x) for x in sys.argv[2].split()], [float(x) for x in sys.argv[3].split()]
mu, mt = statistics.median(u), statistics.median(t)
extra = f", {((mt - mu) / 10000) * 1e6:.0f} µs per traced open" if id == "opens" else ""
print(f"{id:6} untraced {mu:8.2f} s  traced {mt:8.2f} s  overhead {(mt / mu - 1) * 100:+6.1f}%{extra}"
      f"   (untraced {u}, traced {t})")
EOF
  done
}

bench local
if [ "${SLURM:-1}" != 0 ]; then
  bash scripts/slurm start "$cluster" >/dev/null
  export SLURM_CONF=$cluster/slurm.conf
  bench slurm
fi
