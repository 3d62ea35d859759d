-- Reads that every page makes stay narrow at 1,000 agents.
--
-- The signed envelopes (about 180 KB each) move out of `submissions` into a table of
-- their own, as in SQLite's 0008, where kept in the row they spread 1,000 submissions
-- over 685 pages that every leaderboard read scanned. (PostgreSQL kept them out of line
-- already; the two schemas stay one.)
CREATE TABLE envelopes (
    bundle_id  TEXT PRIMARY KEY REFERENCES submissions (bundle_id),
    envelope   BYTEA NOT NULL              -- the signed envelope, exactly as received
);
INSERT INTO envelopes (bundle_id, envelope) SELECT bundle_id, envelope FROM submissions;
ALTER TABLE submissions DROP COLUMN envelope;

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
