-- Counts per submission and hint condition (the aggregates summed over tasks), kept at
-- ingest: the leaderboard reads three rows per agent instead of thirty-six.
CREATE TABLE totals (
    bundle_id    TEXT NOT NULL REFERENCES submissions (bundle_id),
    hint         TEXT NOT NULL,
    runs         BIGINT NOT NULL,
    counted      BIGINT NOT NULL,
    successes    BIGINT NOT NULL,
    executed     BIGINT NOT NULL,
    recall_sum   DOUBLE PRECISION NOT NULL,
    recall_runs  BIGINT NOT NULL,
    PRIMARY KEY (bundle_id, hint)
);

INSERT INTO totals (bundle_id, hint, runs, counted, successes, executed, recall_sum, recall_runs)
SELECT bundle_id, hint, SUM(runs), SUM(counted), SUM(successes), SUM(executed), SUM(recall_sum), SUM(recall_runs)
FROM aggregates
GROUP BY bundle_id, hint;

-- One task's results across agents.
CREATE INDEX aggregates_task ON aggregates (task);
