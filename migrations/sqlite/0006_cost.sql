-- What runs cost and how long they took, summed per submission, task and hint condition
-- (and per submission and hint condition in `totals`) at ingest like the other counts,
-- so that cost columns and charts never scan runs. A sum counts only the runs that
-- report the value; `*_runs` says how many did.
ALTER TABLE aggregates ADD COLUMN cost_sum DOUBLE PRECISION NOT NULL DEFAULT 0;
ALTER TABLE aggregates ADD COLUMN cost_runs BIGINT NOT NULL DEFAULT 0;
ALTER TABLE aggregates ADD COLUMN duration_sum DOUBLE PRECISION NOT NULL DEFAULT 0;
ALTER TABLE aggregates ADD COLUMN duration_runs BIGINT NOT NULL DEFAULT 0;
ALTER TABLE totals ADD COLUMN cost_sum DOUBLE PRECISION NOT NULL DEFAULT 0;
ALTER TABLE totals ADD COLUMN cost_runs BIGINT NOT NULL DEFAULT 0;
ALTER TABLE totals ADD COLUMN duration_sum DOUBLE PRECISION NOT NULL DEFAULT 0;
ALTER TABLE totals ADD COLUMN duration_runs BIGINT NOT NULL DEFAULT 0;

UPDATE aggregates SET
    cost_sum = (SELECT COALESCE(SUM(r.cost_usd), 0) FROM runs r
                WHERE r.bundle_id = aggregates.bundle_id AND r.task = aggregates.task AND r.hint = aggregates.hint),
    cost_runs = (SELECT COUNT(r.cost_usd) FROM runs r
                 WHERE r.bundle_id = aggregates.bundle_id AND r.task = aggregates.task AND r.hint = aggregates.hint),
    duration_sum = (SELECT COALESCE(SUM(r.duration_s), 0) FROM runs r
                    WHERE r.bundle_id = aggregates.bundle_id AND r.task = aggregates.task AND r.hint = aggregates.hint),
    duration_runs = (SELECT COUNT(r.duration_s) FROM runs r
                     WHERE r.bundle_id = aggregates.bundle_id AND r.task = aggregates.task AND r.hint = aggregates.hint);

UPDATE totals SET
    cost_sum = (SELECT COALESCE(SUM(g.cost_sum), 0) FROM aggregates g
                WHERE g.bundle_id = totals.bundle_id AND g.hint = totals.hint),
    cost_runs = (SELECT COALESCE(SUM(g.cost_runs), 0) FROM aggregates g
                 WHERE g.bundle_id = totals.bundle_id AND g.hint = totals.hint),
    duration_sum = (SELECT COALESCE(SUM(g.duration_sum), 0) FROM aggregates g
                    WHERE g.bundle_id = totals.bundle_id AND g.hint = totals.hint),
    duration_runs = (SELECT COALESCE(SUM(g.duration_runs), 0) FROM aggregates g
                     WHERE g.bundle_id = totals.bundle_id AND g.hint = totals.hint);
