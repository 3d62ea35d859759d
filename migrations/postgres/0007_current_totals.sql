-- Counts that the failure explorer and the task list read, kept at ingest so that no
-- page groups every agent's rows: 1,000 agents' error counts are 128,000 rows, and
-- grouping them per page took 300 ms.
--
-- Per submission: its runs by outcome and error type, over all tasks and conditions.
CREATE TABLE failure_totals (
    bundle_id   TEXT NOT NULL REFERENCES submissions (bundle_id),
    outcome     TEXT NOT NULL,
    error_type  TEXT NOT NULL,              -- '' where the runs carry none
    runs        BIGINT NOT NULL,
    PRIMARY KEY (bundle_id, outcome, error_type)
);

INSERT INTO failure_totals (bundle_id, outcome, error_type, runs)
SELECT bundle_id, outcome, error_type, SUM(runs)
FROM error_counts
GROUP BY bundle_id, outcome, error_type;

-- Over the current submissions (those not superseded): per task and hint condition,
-- how many submissions ran it and their summed counts. An ingest adds the new current
-- submission's aggregates and subtracts those of the submissions it supersedes.
CREATE TABLE task_totals (
    task           TEXT NOT NULL,
    hint           TEXT NOT NULL,
    bundles        BIGINT NOT NULL,
    runs           BIGINT NOT NULL,
    counted        BIGINT NOT NULL,
    successes      BIGINT NOT NULL,
    executed       BIGINT NOT NULL,
    recall_sum     DOUBLE PRECISION NOT NULL,
    recall_runs    BIGINT NOT NULL,
    cost_sum       DOUBLE PRECISION NOT NULL,
    cost_runs      BIGINT NOT NULL,
    duration_sum   DOUBLE PRECISION NOT NULL,
    duration_runs  BIGINT NOT NULL,
    PRIMARY KEY (task, hint)
);

INSERT INTO task_totals (task, hint, bundles, runs, counted, successes, executed, recall_sum, recall_runs,
    cost_sum, cost_runs, duration_sum, duration_runs)
SELECT g.task, g.hint, COUNT(*), SUM(g.runs), SUM(g.counted), SUM(g.successes), SUM(g.executed), SUM(g.recall_sum),
    SUM(g.recall_runs), SUM(g.cost_sum), SUM(g.cost_runs), SUM(g.duration_sum), SUM(g.duration_runs)
FROM aggregates g JOIN submissions s ON s.bundle_id = g.bundle_id
WHERE s.superseded_by IS NULL
GROUP BY g.task, g.hint;

-- Over the current submissions: per task, outcome and error type, how many submissions
-- had a run end that way, and how many runs did; kept the same way.
CREATE TABLE pattern_totals (
    task        TEXT NOT NULL,
    outcome     TEXT NOT NULL,
    error_type  TEXT NOT NULL,
    bundles     BIGINT NOT NULL,
    runs        BIGINT NOT NULL,
    PRIMARY KEY (task, outcome, error_type)
);

INSERT INTO pattern_totals (task, outcome, error_type, bundles, runs)
SELECT e.task, e.outcome, e.error_type, COUNT(DISTINCT e.bundle_id), SUM(e.runs)
FROM error_counts e JOIN submissions s ON s.bundle_id = e.bundle_id
WHERE s.superseded_by IS NULL
GROUP BY e.task, e.outcome, e.error_type;
