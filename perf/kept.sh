# Sourced by perf/start.sh and perf/plans.sh: the database and blobs that perf/serve.sh
# made and kept in BENCH_KEEP (its SQLite database), or with BENCH_DATABASE_URL that
# PostgreSQL database and BENCH_KEEP/blobs-postgres. Sets `url` and `blobs`.
kept_database() {
  local keep=${BENCH_KEEP:?BENCH_KEEP names the folder perf/serve.sh kept its database in}
  if [ -n "${BENCH_DATABASE_URL:-}" ]; then
    url=$BENCH_DATABASE_URL blobs=$keep/blobs-postgres
  else
    [ -f "$keep/db.sqlite" ] || { echo "no database in $keep: make it with BENCH_KEEP=$keep bash perf/serve.sh N" >&2; exit 1; }
    url=sqlite://$keep/db.sqlite blobs=$keep/blobs-sqlite
  fi
}
