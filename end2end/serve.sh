#!/usr/bin/env bash
# Starts the server for the browser tests: a fresh SQLite database with the demo data,
# and a registered key whose hostile bundle (markup in the agent's names) the tests
# upload through the form. Playwright runs this and stops it.
set -euo pipefail
cd "$(dirname "$0")/.."
port=${E2E_PORT:?}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# The islands' WebAssembly (a no-op when it is up to date), then the server that embeds it.
bash scripts/wasm
# Built as the Rust tests build it (their dev-dependencies add features to tokio and the
# store, so a plain `cargo build` would compile much of it again): after the test
# command's `cargo test --no-run` there is nothing left to build, and these are the very
# binaries the Rust tests ran.
cargo test --no-run -q
rexbench=target/debug/rexbench
srv=target/debug/rexbench-server

$rexbench keygen --out "$work/e2e" >/dev/null
run="$work/results/runs/wordfreq/none/1"
mkdir -p "$run"
digest=$(printf 'ab%.0s' $(seq 32))
printf '{"benchmark": {"name": "RExBench examples", "version": "1.0", "task_set_digest": "%s"}}\n' "$digest" \
  > "$work/results/evaluation.json"
printf '{"outcome": "execution_failed", "error_type": "<img src=x onerror=window.__xss=3>"}\n' > "$run/run.json"
printf -- '--- a/count.py\n+++ b/count.py\n@@ -1 +1 @@\n-x\n+<script>window.__xss=4</script>\n' > "$run/patch.diff"
printf 'Traceback (most recent call last):\n<img src=x onerror=window.__xss=5>\nValueError: boom\n' > "$run/stderr.txt"
cat > "$work/agent.toml" <<'TOML'
id = "e2e-hostile"
framework = "<img src=x onerror=window.__xss=1>"
model = "M<script>window.__xss=2</script>"
display_name = "<script>window.__xss=6</script> Hostile agent"
url = "https://example.org/?a=1&b=2'x"
TOML
mkdir -p end2end/.work
# The router's pages, which the specs that cover every page check their cases against.
$srv pages > end2end/.work/pages.txt
$rexbench pack "$work/results" --agent "$work/agent.toml" --key "$work/e2e.pem" --out end2end/.work/hostile.rexb.tar.gz >/dev/null \
  || { echo "packing the hostile bundle failed" >&2; exit 1; }
# The committed example results with every failure relabelled infra_error before
# packing, as a submitter who wants a better row would do: the tests upload it and
# find it listed apart, its uncounted runs said.
cp -r tasks/examples/results "$work/relabelled"
python3 - "$work/relabelled/runs" <<'PY'
import json, pathlib, sys
for run in pathlib.Path(sys.argv[1]).glob("*/*/*/run.json"):
    record = json.loads(run.read_text())
    if record["outcome"] != "success":
        record["outcome"] = "infra_error"
        run.write_text(json.dumps(record))
PY
cat > "$work/relabelled.toml" <<'TOML'
id = "e2e-relabelled"
framework = "RelabelFramework"
model = "Example Model"
display_name = "Relabelled agent"
TOML
$rexbench pack "$work/relabelled" --agent "$work/relabelled.toml" --key "$work/e2e.pem" --out end2end/.work/relabelled.rexb.tar.gz >/dev/null \
  || { echo "packing the relabelled bundle failed" >&2; exit 1; }

# An agent's Harbor 0.26 job and a job that regrades one of its trials (whose trajectory
# is ATIF-v1.8, with an image and an audio part), imported and packed as a submitter
# would: the tests upload it and read the regraded run as a maintainer.
fixtures=runner/tests/fixtures/harbor
$rexbench import-harbor "$fixtures/2026-11-24__12-00-00" "$fixtures/2026-11-24__18-00-00" --hint none \
  --out "$work/regraded" >/dev/null || { echo "importing the regraded jobs failed" >&2; exit 1; }
sed -i 's/^id = .*/id = "e2e-regraded"/' "$work/regraded/agent.toml"
# A task set of its own, so that the demo's RExBench board (which other tests count) stays as it is.
sed -i 's/"task_set_digest": "[0-9a-f]*"/"task_set_digest": "'"$(printf 'ef%.0s' $(seq 32))"'"/' "$work/regraded/evaluation.json"
$rexbench pack "$work/regraded" --agent "$work/regraded/agent.toml" --key "$work/e2e.pem" --out end2end/.work/regraded.rexb.tar.gz >/dev/null \
  || { echo "packing the regraded bundle failed" >&2; exit 1; }

export DATABASE_URL="sqlite://$work/db.sqlite" REXBENCH_BLOBS="$work/blobs" REXBENCH_ADDR="127.0.0.1:$port" RUST_LOG=warn
# Every test submits from 127.0.0.1 (the vectors' test alone posts fifty bundles);
# the rate limits have tests of their own.
export REXBENCH_SUBMISSIONS_PER_HOUR=1000
# The desk's tests file four key requests from 127.0.0.1 (the allowance has tests of its own).
export REXBENCH_KEY_REQUESTS_PER_DAY=100
$srv keys add --public-key "$work/e2e.pub.pem" --owner "End-to-end tests" --tier submitter >/dev/null
# The conformance vectors' key, so that /submit's check in the browser meets each vector.
$srv keys add --public-key vectors/test-key/key.pub.pem --owner "Conformance vectors" --tier submitter >/dev/null
# The task sets the tests' own bundles and the vectors name (spec §5a), registered as a
# board's maintainers would register them.
$srv task-sets add --digest "$digest" --name "RExBench examples" --version 1.0 --note "the end-to-end tests' hostile bundle" >/dev/null
$srv task-sets add --digest "$digest" --name RExBench --version 1.0 --note "the conformance vectors" >/dev/null
$srv task-sets add --digest "$(printf 'ef%.0s' $(seq 32))" --name RExBench --version 1.0 --note "the end-to-end tests' regraded job" >/dev/null
# The desk's tests' bundles: the shortcut example's results (a success its runner
# flagged, a finding to review), each agent's log its own, on a task set of their own so
# that the example tasks' board, which other tests read, stays as it is.
desk_set=$(printf 'd1%.0s' $(seq 32))
$srv task-sets add --digest "$desk_set" --name "Desk tests" --version 1.0 --note "the end-to-end tests' desk" >/dev/null
# One-time links that sign a browser in as a maintainer, two for each project of the
# tests (a private run's page as its readers see it, and the regraded run's); they may
# be opened for two hours.
for _ in 1 2 3 4; do $srv sign-in-link --base "http://127.0.0.1:$port" --valid-for 120; done > end2end/.work/sign-in-links.txt
# The demo's self-reported submissions get their reproduction samples at ingest; the
# maintainers' re-run of them (`rexbench reproduce`, with a maintainer key and the admin
# token) comes before the tests, on a first start of the server, on another port (the
# tests wait for this one's), that is then stopped.
export REXBENCH_ADMIN_TOKEN="e2e-admin-token-$(od -An -N8 -tx1 /dev/urandom | tr -d ' \n')"
$rexbench keygen --out "$work/maintainers" >/dev/null
$srv keys add --public-key "$work/maintainers.pub.pem" --owner "Maintainers (end-to-end)" --tier maintainer >/dev/null
first_addr="127.0.0.1:$((port + 1000))"
REXBENCH_ADDR=$first_addr $srv serve --demo >"$work/first-start.log" 2>&1 &
first=$!
for _ in $(seq 1 600); do REXBENCH_ADDR=$first_addr $srv health >/dev/null 2>&1 && break; sleep 0.2; done
# The runner takes the token from a file, never from its environment (it would be every
# re-run's process's).
printf '%s\n' "$REXBENCH_ADMIN_TOKEN" > "$work/admin-token"
env -u REXBENCH_ADMIN_TOKEN $rexbench reproduce --server "http://$first_addr" --token-file "$work/admin-token" \
  --key "$work/maintainers.pem" --out "$work/repro" --gold tasks/examples/gold >"$work/reproduce.log" 2>&1 \
  || { cat "$work/reproduce.log" "$work/first-start.log" >&2; kill "$first"; exit 1; }
# Key requests for the desk's tests, one to approve and one to decline for each project
# of the tests, each key with a bundle held while it is pending (`rexbench register`,
# then `rexbench submit`, as a new submitter does); two held-out variants to retire; and
# links that sign a browser in as a maintainer (the desk's) and as a submitter.
for who in js-approve nojs-approve js-decline nojs-decline; do
  $rexbench keygen --out "$work/$who" >/dev/null
  $rexbench register --server "http://$first_addr" --key "$work/$who.pem" --owner "Desk $who lab" \
    --contact "$who@lab.example.org" --note "the desk's $who test" >"$work/register-$who.log" 2>&1 \
    || { cat "$work/register-$who.log" "$work/first-start.log" >&2; kill "$first"; exit 1; }
  printf 'id = "e2e-%s"\nframework = "DeskFramework"\nmodel = "Example Model"\n' "$who" > "$work/$who.toml"
  cp -r tasks/examples/shortcut/results "$work/desk-$who"
  sed -i '0,/"name": "[^"]*"/s//"name": "Desk tests"/; s/"task_set_digest": "[0-9a-f]*"/"task_set_digest": "'"$desk_set"'"/' \
    "$work/desk-$who/evaluation.json"
  for log in "$work/desk-$who"/runs/*/*/*/agent_log.txt; do echo "the desk's $who test" >> "$log"; done
  $rexbench pack "$work/desk-$who" --agent "$work/$who.toml" --key "$work/$who.pem" --out "$work/$who.tar.gz" >/dev/null \
    || { echo "packing the desk's $who bundle failed" >&2; kill "$first"; exit 1; }
  $rexbench submit "$work/$who.tar.gz" --server "http://$first_addr" >"$work/submit-$who.log" 2>&1 \
    || { cat "$work/submit-$who.log" >&2; kill "$first"; exit 1; }
done
for project in js nojs; do
  variant=$(printf "$([ "$project" = js ] && echo c1 || echo c2)%.0s" $(seq 32))
  $srv variants add --task wordfreq --digest "$variant" --note "the desk's $project retirement test" >/dev/null
done
for _ in 1 2; do $srv sign-in-link --base "http://127.0.0.1:$port" --valid-for 120; done > end2end/.work/desk-links.txt
e2e_keyid=$($srv keys list | awk '/End-to-end tests/ {print $1}')
for _ in 1 2; do $srv sign-in-link --as "$e2e_keyid" --base "http://127.0.0.1:$port" --valid-for 120; done \
  > end2end/.work/submitter-links.txt
kill "$first"
wait "$first" || true
# The server the tests use. Should it end before Playwright stops it, the tests' output
# says how (its status, or the signal that ended it), since every test after would only
# meet a refused connection.
$srv serve --demo &
server=$!
trap 'kill "$server" 2>/dev/null; rm -rf "$work"' EXIT
trap 'exit 143' TERM
trap 'exit 130' INT
status=0
wait "$server" || status=$?
if [ "$status" -gt 128 ]; then
  echo "end2end/serve.sh: the server was ended by signal $(kill -l $((status - 128)))" >&2
else
  echo "end2end/serve.sh: the server ended with status $status" >&2
fi
exit "$status"
