-- Results another harness ran and judged (provenance `imported`, e.g. Harbor's RExBench
-- adapter) are stored beside evaluated and published ones. SQLite cannot change a CHECK
-- constraint, so the table is rebuilt as SQLite's documentation prescribes; the store runs
-- its migrations with foreign keys off and checks every reference afterwards
-- (store/src/db.rs), so dropping the old table deletes nothing that refers to it.
CREATE TABLE submissions_new (
    bundle_id          TEXT PRIMARY KEY,   -- SHA-256 of the manifest bytes
    agent_id           TEXT NOT NULL REFERENCES agents (id),
    keyid              TEXT NOT NULL REFERENCES keys (keyid),
    tier               TEXT NOT NULL,
    provenance         TEXT NOT NULL CHECK (provenance IN ('evaluated', 'imported', 'published')),
    provenance_source  TEXT,
    benchmark_name     TEXT NOT NULL,
    benchmark_version  TEXT NOT NULL,
    task_set_digest    TEXT NOT NULL,
    runner_name        TEXT NOT NULL,
    runner_version     TEXT NOT NULL,
    created_at         TEXT NOT NULL,
    received_at        TEXT NOT NULL,
    superseded_by      TEXT REFERENCES submissions (bundle_id),
    run_count          BIGINT NOT NULL,
    artifact_bytes     BIGINT NOT NULL,
    envelope           BLOB NOT NULL       -- the signed envelope, exactly as received
);
INSERT INTO submissions_new (bundle_id, agent_id, keyid, tier, provenance, provenance_source, benchmark_name,
    benchmark_version, task_set_digest, runner_name, runner_version, created_at, received_at, superseded_by,
    run_count, artifact_bytes, envelope)
SELECT bundle_id, agent_id, keyid, tier, provenance, provenance_source, benchmark_name, benchmark_version,
    task_set_digest, runner_name, runner_version, created_at, received_at, superseded_by, run_count,
    artifact_bytes, envelope
FROM submissions;
DROP TABLE submissions;
ALTER TABLE submissions_new RENAME TO submissions;
CREATE INDEX submissions_current ON submissions (agent_id, benchmark_version) WHERE superseded_by IS NULL;
