-- Runs per submission, task, hint condition, outcome and error type, kept at ingest so
-- that the failure explorer never scans runs. `error_type` is '' where a run has none
-- (every success, and published results, which carry outcomes only).
CREATE TABLE error_counts (
    bundle_id   TEXT NOT NULL REFERENCES submissions (bundle_id),
    task        TEXT NOT NULL,
    hint        TEXT NOT NULL,
    outcome     TEXT NOT NULL,
    error_type  TEXT NOT NULL,
    runs        BIGINT NOT NULL,
    PRIMARY KEY (bundle_id, task, hint, outcome, error_type)
);

INSERT INTO error_counts (bundle_id, task, hint, outcome, error_type, runs)
SELECT bundle_id, task, hint, outcome, COALESCE(error_type, ''), COUNT(*)
FROM runs
GROUP BY bundle_id, task, hint, outcome, COALESCE(error_type, '');
