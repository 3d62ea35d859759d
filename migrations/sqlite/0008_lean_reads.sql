-- Reads that every page makes stay narrow at 1,000 agents.
--
-- The signed envelopes (about 180 KB each) move out of `submissions` into a table of
-- their own: kept in the row, they spread 1,000 submissions over 685 pages, which every
-- leaderboard read scanned. SQLite frees a dropped column's bytes but not the pages its
-- rows sat on, so the table is rebuilt as in 0005 (the store runs its migrations with
-- foreign keys off and checks every reference afterwards).
CREATE TABLE envelopes (
    bundle_id  TEXT PRIMARY KEY REFERENCES submissions (bundle_id),
    envelope   BLOB NOT NULL               -- the signed envelope, exactly as received
);
INSERT INTO envelopes (bundle_id, envelope) SELECT bundle_id, envelope FROM submissions;

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
    artifact_bytes     BIGINT NOT NULL
);
INSERT INTO submissions_new (bundle_id, agent_id, keyid, tier, provenance, provenance_source, benchmark_name,
    benchmark_version, task_set_digest, runner_name, runner_version, created_at, received_at, superseded_by,
    run_count, artifact_bytes)
SELECT bundle_id, agent_id, keyid, tier, provenance, provenance_source, benchmark_name, benchmark_version,
    task_set_digest, runner_name, runner_version, created_at, received_at, superseded_by, run_count,
    artifact_bytes
FROM submissions;
DROP TABLE submissions;
ALTER TABLE submissions_new RENAME TO submissions;
CREATE INDEX submissions_current ON submissions (agent_id, benchmark_version) WHERE superseded_by IS NULL;

-- The failure explorer's counts over the current submissions, kept at ingest as
-- `pattern_totals` is: ranking 7,000 per-submission rows by agent and error type on
-- every request took 25 ms.
--
-- Per agent: its runs that did not succeed, over all its current submissions.
CREATE TABLE agent_failure_totals (
    agent_id  TEXT PRIMARY KEY REFERENCES agents (id),
    runs      BIGINT NOT NULL
);
CREATE INDEX agent_failure_totals_runs ON agent_failure_totals (runs);

INSERT INTO agent_failure_totals (agent_id, runs)
SELECT s.agent_id, SUM(f.runs)
FROM failure_totals f JOIN submissions s ON s.bundle_id = f.bundle_id
WHERE s.superseded_by IS NULL AND f.outcome <> 'success'
GROUP BY s.agent_id;

-- Per error type and agent: the agent's runs that ended with that error, whatever their
-- outcome; runs without an error type are not kept here.
CREATE TABLE error_type_agents (
    error_type  TEXT NOT NULL,
    agent_id    TEXT NOT NULL REFERENCES agents (id),
    runs        BIGINT NOT NULL,
    PRIMARY KEY (error_type, agent_id)
);
CREATE INDEX error_type_agents_runs ON error_type_agents (error_type, runs);

INSERT INTO error_type_agents (error_type, agent_id, runs)
SELECT f.error_type, s.agent_id, SUM(f.runs)
FROM failure_totals f JOIN submissions s ON s.bundle_id = f.bundle_id
WHERE s.superseded_by IS NULL AND f.outcome <> 'success' AND f.error_type <> ''
GROUP BY f.error_type, s.agent_id;

-- A task's page places every agent from the task's aggregates alone: with the counts it
-- orders by in the index, the task's 3,000 rows are read side by side, where looking
-- each agent's up by the primary key touched pages all over the table.
DROP INDEX aggregates_task;
CREATE INDEX aggregates_task ON aggregates (task, bundle_id, hint, successes, counted);
