#!/usr/bin/env bash
# Benchmark: the runner on Slurm (issue 18), on a real single-node cluster of this
# machine (scripts/slurm; 2 CPUs, so Slurm runs at most 2 one-CPU jobs at once):
#   a. 100 example runs (25 each of four kinds: success, wrong result, a Python error,
#      a shell run) with `--executor slurm`, against `--executor local --jobs 2` on the
#      same runs, and against Slurm alone: 100 bare `sbatch --wrap` jobs of one
#      experiment each, submitted at once, until the last has ended (the scheduler's
#      own floor);
#   b. the same comparison on 20 runs whose experiment takes SLOW seconds (default 10):
#      the example's successful patch, sleeping first, with the task's limit raised to
#      60 s in a copy of the task cards;
#   c. the runner's own memory (peak RSS) and CPU while 1,000 runs wait in the queue
#      (held with --sbatch-arg=--hold), over 60 s once all are submitted, and how long
#      submitting them took; then Ctrl-C, which cancels the 1,000.
# Needs root and Slurm's packages (scripts/setup installs them).
# Usage: bash perf/slurm.sh [SLOW]
set -euo pipefail
cd "$(dirname "$0")/.."
slow=${1:-10}
work=$(mktemp -d)
cluster=$work/cluster
cleanup() { bash scripts/slurm stop "$cluster" >/dev/null 2>&1 || true; rm -rf "$work"; }
trap cleanup EXIT

cargo build --release -q -p rexbench-runner
rexbench=$PWD/target/release/rexbench
bash scripts/slurm start "$cluster"
export SLURM_CONF=$cluster/slurm.conf
now() { date +%s.%N; }
secs() { python3 -c "import sys; print(f'{float(sys.argv[2]) - float(sys.argv[1]):.1f}')" "$1" "$2"; }
ratio() { python3 -c "import sys; print(f'{float(sys.argv[1]) / float(sys.argv[2]):.2f}')" "$1" "$2"; }

examples=tasks/examples/outputs
# a. 100 example runs.
mk100() {
  local out=$1 n
  for n in $(seq 25); do
    mkdir -p "$out/wordfreq/none/$n" "$out/wordfreq/hints/$n" "$out/wordfreq/detailed/$n" "$out/csvstats"
    cp $examples/wordfreq/none/1/patch.diff "$out/wordfreq/none/$n/"
    cp $examples/wordfreq/none/2/patch.diff "$out/wordfreq/hints/$n/"
    cp $examples/wordfreq/hints/1/patch.diff "$out/wordfreq/detailed/$n/"
    cp $examples/csvstats/example-agent_default_run1.patch "$out/csvstats/example-agent_default_run$n.patch"
  done
}
# b. runs whose experiment sleeps.
mkslow() {
  local out=$1 n
  mkdir -p "$work/diff" && cp -r tasks/examples/wordfreq/codebase "$work/diff/a"
  cp -r "$work/diff/a" "$work/diff/b"
  (cd "$work/diff/b" && patch -s -p1 < "$OLDPWD/$examples/wordfreq/none/1/patch.diff")
  sed -i "1i import time; time.sleep($slow)" "$work/diff/b/run.py"
  (cd "$work/diff" && diff -ruN a b > slow.patch || true)
  for n in $(seq 20); do
    mkdir -p "$out/wordfreq/none/$n" && cp "$work/diff/slow.patch" "$out/wordfreq/none/$n/patch.diff"
  done
}

# Every run's result but the time it took, one line per run.
records() {
  python3 - "$1/runs" <<'EOF'
import json, pathlib, sys
runs = pathlib.Path(sys.argv[1])
for path in sorted(runs.glob("*/*/*/run.json")):
    run = json.loads(path.read_text())
    run.pop("duration_s", None)
    print(path.parent.relative_to(runs), json.dumps(run, sort_keys=True))
EOF
}

compare() {
  local label=$1 outputs=$2 runs=$3 tasks=$4 t0 t1 local_s slurm_s floor_s
  t0=$(now)
  "$rexbench" evaluate "$outputs" --out "$work/$label-local" --tasks "$tasks" --gold tasks/examples/gold --jobs 2 >/dev/null 2>&1
  t1=$(now); local_s=$(secs "$t0" "$t1")
  t0=$(now)
  "$rexbench" evaluate "$outputs" --out "$work/$label-slurm" --tasks "$tasks" --gold tasks/examples/gold --executor slurm >/dev/null 2>&1
  t1=$(now); slurm_s=$(secs "$t0" "$t1")
  # Slurm alone: the same number of one-CPU jobs, each running one experiment's command.
  local cmd
  if [ "$label" = slow ]; then cmd="python3 -c 'import time; time.sleep($slow)'"; else cmd="python3 -c pass"; fi
  t0=$(now)
  for _ in $(seq "$runs"); do sbatch --parsable -J bare -o /dev/null --wrap "$cmd" >/dev/null; done
  while [ -n "$(squeue -h -n bare -t pending,running,configuring,completing)" ]; do sleep 0.05; done
  t1=$(now); floor_s=$(secs "$t0" "$t1")
  [ "$(find "$work/$label-slurm/runs" -name run.json | wc -l)" = "$runs" ] || { echo "$label: not every run finished" >&2; exit 1; }
  if ! diff <(records "$work/$label-local") <(records "$work/$label-slurm") >/dev/null; then
    echo "the $label runs' results differ between the executors" >&2; exit 1
  fi
  printf '%-8s %4s runs: local --jobs 2 %6s s | slurm %6s s (%s×) | Slurm alone %6s s | runner over Slurm alone %s×\n' \
    "$label" "$runs" "$local_s" "$slurm_s" "$(ratio "$slurm_s" "$local_s")" "$floor_s" "$(ratio "$slurm_s" "$floor_s")"
}

mk100 "$work/hundred"
compare examples "$work/hundred" 100 tasks
mkslow "$work/slow"
cp -r tasks "$work/tasks"
sed -i "s/^timeout_s = 10$/timeout_s = 60/" "$work/tasks/examples/wordfreq/task.toml"
compare slow "$work/slow" 20 "$work/tasks"

# c. 1,000 queued runs.
for n in $(seq 1000); do
  mkdir -p "$work/thousand/wordfreq/none/$n" && cp $examples/wordfreq/none/1/patch.diff "$work/thousand/wordfreq/none/$n/"
done
t0=$(now)
"$rexbench" evaluate "$work/thousand" --out "$work/thousand-results" --gold tasks/examples/gold --executor slurm \
  --max-jobs 1000 --sbatch-arg=--hold 2>"$work/thousand.log" &
pid=$!
until [ "$(squeue -h -t PENDING | wc -l)" -ge 1000 ]; do sleep 0.2; done
t1=$(now)
ticks() { awk '{print $14 + $15}' "/proc/$pid/stat"; }
hz=$(getconf CLK_TCK)
c0=$(ticks); w0=$(now)
sleep 60
c1=$(ticks); w1=$(now)
rss=$(awk '/VmHWM/ {print $2}' "/proc/$pid/status")
kill -INT "$pid"
code=0; wait "$pid" || code=$?
left=$(squeue -h -t PENDING,RUNNING | wc -l)
python3 - "$c0" "$c1" "$w0" "$w1" "$hz" "$rss" "$(secs "$t0" "$t1")" "$code" "$left" <<'EOF'
import sys
c0, c1, w0, w1, hz, rss, submit, code, left = sys.argv[1:]
cpu = (float(c1) - float(c0)) / float(hz) / (float(w1) - float(w0)) * 100
print(f"1000 queued: submitted in {submit} s; while waiting: peak RSS {int(rss) / 1024:.1f} MB, "
      f"CPU {cpu:.2f}% of a core; Ctrl-C: exit {code}, {left} jobs left in the queue")
EOF
