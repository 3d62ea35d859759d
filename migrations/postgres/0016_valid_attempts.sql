-- What counts as an attempt (issue 49): coverage counts valid attempts only (runs whose
-- outcome the rates count, not `infra_error`), and each (task, hint) cell a submission
-- has runs in is held to the attempts the benchmark asks for that task.
--
-- The rule per task, as the task cards said it when the counts below were kept: the
-- server writes it at start (`Store::know_attempts`) and recounts the cells of a task
-- whose rule changed; a task with no row here is held to RExBench's 5.
CREATE TABLE attempt_rules (
    task      TEXT PRIMARY KEY,
    attempts  BIGINT NOT NULL
);

-- How many valid attempts a cell lacks (0 for published results, which keep their
-- source's design).
ALTER TABLE aggregates ADD COLUMN shortfall BIGINT NOT NULL DEFAULT 0;
-- Per submission and condition, the cells with a shortfall; per submission, all of them.
ALTER TABLE totals ADD COLUMN short_tasks BIGINT NOT NULL DEFAULT 0;
ALTER TABLE submissions ADD COLUMN short_cells BIGINT NOT NULL DEFAULT 0;
-- Per submission, the runs that ended `infra_error`: what the leaderboard counts the
-- rows that have any by.
ALTER TABLE submissions ADD COLUMN infra_errors BIGINT NOT NULL DEFAULT 0;

UPDATE aggregates SET shortfall = CASE WHEN counted < 5 THEN 5 - counted ELSE 0 END
WHERE bundle_id IN (SELECT bundle_id FROM submissions WHERE provenance <> 'published');

UPDATE totals SET
    tasks = (SELECT COUNT(*) FROM aggregates g
             WHERE g.bundle_id = totals.bundle_id AND g.hint = totals.hint AND g.counted > 0),
    fewest_runs = (SELECT COALESCE(MIN(g.counted), 0) FROM aggregates g
                   WHERE g.bundle_id = totals.bundle_id AND g.hint = totals.hint AND g.counted > 0),
    most_runs = (SELECT COALESCE(MAX(g.counted), 0) FROM aggregates g
                 WHERE g.bundle_id = totals.bundle_id AND g.hint = totals.hint),
    short_tasks = (SELECT COUNT(*) FROM aggregates g
                   WHERE g.bundle_id = totals.bundle_id AND g.hint = totals.hint AND g.shortfall > 0);

UPDATE submissions SET
    short_cells = (SELECT COUNT(*) FROM aggregates g WHERE g.bundle_id = submissions.bundle_id AND g.shortfall > 0),
    infra_errors = (SELECT COALESCE(SUM(t.runs - t.counted), 0) FROM totals t WHERE t.bundle_id = submissions.bundle_id);

-- A failed reproduction follows the agent (spec §4e, §6a): the earlier submission of the
-- same agent whose run did not reproduce, named on the later one; and the runs a later
-- submission's sample holds because the same run of that one did not reproduce.
ALTER TABLE submissions ADD COLUMN not_reproduced_before TEXT;
ALTER TABLE samples ADD COLUMN carried_from TEXT;

-- Runs that ended `infra_error` whose re-run ended in a counted outcome (a
-- `not-reproduced` finding no maintainer dismissed): failures in the strict view.
ALTER TABLE aggregates ADD COLUMN refuted BIGINT NOT NULL DEFAULT 0;
ALTER TABLE totals ADD COLUMN refuted BIGINT NOT NULL DEFAULT 0;
ALTER TABLE task_totals ADD COLUMN refuted BIGINT NOT NULL DEFAULT 0;
