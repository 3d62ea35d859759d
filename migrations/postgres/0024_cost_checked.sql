-- Cost you can check (bundle spec §4m): each run's tokens as its bundle states them, the
-- price of those tokens at its model's price of its day (where the price table has one),
-- and why its stated cost is not borne out, if it is not (`differs`, `no-tokens`,
-- `trajectory-disagrees`).
ALTER TABLE runs ADD COLUMN tokens_input BIGINT;
ALTER TABLE runs ADD COLUMN tokens_output BIGINT;
ALTER TABLE runs ADD COLUMN tokens_cache_read BIGINT;
ALTER TABLE runs ADD COLUMN tokens_cache_write BIGINT;
ALTER TABLE runs ADD COLUMN cost_computed_usd DOUBLE PRECISION;
ALTER TABLE runs ADD COLUMN cost_mark TEXT;

-- Of the runs whose cost a cell sums (`cost_runs`), those whose cost the board computed
-- from tokens it could check. From this migration on `cost_sum` sums each run's counted
-- cost (the computed one where there is one); rows stored before keep their stated costs,
-- none of them checked. And of all the runs, those whose cost carries a mark.
ALTER TABLE aggregates ADD COLUMN cost_checked BIGINT NOT NULL DEFAULT 0;
ALTER TABLE totals ADD COLUMN cost_checked BIGINT NOT NULL DEFAULT 0;
ALTER TABLE task_totals ADD COLUMN cost_checked BIGINT NOT NULL DEFAULT 0;
ALTER TABLE aggregates ADD COLUMN cost_marked BIGINT NOT NULL DEFAULT 0;
ALTER TABLE totals ADD COLUMN cost_marked BIGINT NOT NULL DEFAULT 0;
ALTER TABLE task_totals ADD COLUMN cost_marked BIGINT NOT NULL DEFAULT 0;

-- The task folder a run's harness ran (bundle spec §4n: one per task in a bundle), kept
-- with the run and with its submission's counts of the task, which the task's page reads.
ALTER TABLE runs ADD COLUMN task_folder TEXT;
ALTER TABLE aggregates ADD COLUMN task_folder TEXT;
