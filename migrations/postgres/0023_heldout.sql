-- Held-out variants (bundle spec §4l): a variant of a task the maintainers keep in their
-- gold folder, registered by its digest before the submissions it may be chosen for.
CREATE TABLE heldout_variants (
    task TEXT NOT NULL,
    digest TEXT NOT NULL,
    registered_at TEXT NOT NULL,
    note TEXT NOT NULL,
    -- From when it is chosen for no new submission (its contents may have leaked).
    retired_at TEXT,
    PRIMARY KEY (task, digest)
);

-- The variant the sampling key chose for a sampled success, at ingest.
ALTER TABLE samples ADD COLUMN heldout_variant TEXT;

-- A reproduced run's re-run on that variant: one bit is told, whether it was a success
-- there (1) or not (0).
ALTER TABLE reproduced_runs ADD COLUMN heldout_variant TEXT;
ALTER TABLE reproduced_runs ADD COLUMN heldout_generalised BIGINT;

-- How many of a submission's runs were re-run on a held-out variant, and how many of
-- those generalised (a success there too).
ALTER TABLE submissions ADD COLUMN heldout BIGINT NOT NULL DEFAULT 0;
ALTER TABLE submissions ADD COLUMN generalised BIGINT NOT NULL DEFAULT 0;

-- The change log records each registration.
ALTER TABLE changes DROP CONSTRAINT changes_kind_check;
ALTER TABLE changes ADD CONSTRAINT changes_kind_check
    CHECK (kind IN ('accepted', 'superseded', 'retracted', 'reviewed', 'outputs', 'reproduced', 'sampling', 'key', 'task_set', 'heldout_variant'));
