-- What makes rows comparable (issue 29): which harness executed a submission's runs,
-- whether its source tells how its failed runs ended, and how much of its task set it
-- covers under each hint condition.
--
-- The harness, as `bundle::Manifest::harness` reads it from the manifest: the runner for
-- evaluated results; the harness an imported result's source names first, with the
-- version after it; Harbor for a published source that begins with it, else RExBench's
-- original harness. Rows written before this version are read the same way here.
ALTER TABLE submissions ADD COLUMN harness TEXT NOT NULL DEFAULT 'rexbench';
ALTER TABLE submissions ADD COLUMN harness_version TEXT;
-- 0 when the source publishes only whether each run succeeded.
ALTER TABLE submissions ADD COLUMN execution_known BIGINT NOT NULL DEFAULT 1;

UPDATE submissions SET
    harness = CASE
        WHEN provenance = 'evaluated' THEN 'rexbench'
        WHEN provenance = 'published' AND lower(provenance_source) LIKE 'harbor%' THEN 'harbor'
        WHEN provenance = 'published' THEN 'rexbench-original'
        ELSE lower(rtrim(split_part(provenance_source, ' ', 1), ','))
    END,
    harness_version = CASE
        WHEN provenance = 'evaluated' THEN runner_version
        WHEN provenance = 'published' AND lower(provenance_source) NOT LIKE 'harbor%' THEN NULL
        WHEN rtrim(split_part(provenance_source, ' ', 2), ',') ~ '^[0-9]'
            THEN rtrim(split_part(provenance_source, ' ', 2), ',')
    END;

CREATE INDEX submissions_harness ON submissions (harness);

-- Runs whose execution is known, beside the runs that count: execution success is
-- `executed / exec_counted`, and absent where no run's execution is known.
ALTER TABLE aggregates ADD COLUMN exec_counted BIGINT NOT NULL DEFAULT 0;
ALTER TABLE totals ADD COLUMN exec_counted BIGINT NOT NULL DEFAULT 0;
ALTER TABLE task_totals ADD COLUMN exec_counted BIGINT NOT NULL DEFAULT 0;
UPDATE aggregates SET exec_counted = counted;
UPDATE totals SET exec_counted = counted;
UPDATE task_totals SET exec_counted = counted;

-- Coverage per submission and hint condition: the tasks with runs, and the fewest and
-- most runs (attempts) on one of them.
ALTER TABLE totals ADD COLUMN tasks BIGINT NOT NULL DEFAULT 0;
ALTER TABLE totals ADD COLUMN fewest_runs BIGINT NOT NULL DEFAULT 0;
ALTER TABLE totals ADD COLUMN most_runs BIGINT NOT NULL DEFAULT 0;
UPDATE totals SET
    tasks = (SELECT COUNT(*) FROM aggregates g WHERE g.bundle_id = totals.bundle_id AND g.hint = totals.hint),
    fewest_runs = (SELECT COALESCE(MIN(g.runs), 0) FROM aggregates g
                   WHERE g.bundle_id = totals.bundle_id AND g.hint = totals.hint),
    most_runs = (SELECT COALESCE(MAX(g.runs), 0) FROM aggregates g
                 WHERE g.bundle_id = totals.bundle_id AND g.hint = totals.hint);
