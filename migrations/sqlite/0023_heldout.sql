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

-- The change log records each registration (SQLite cannot alter a CHECK: the table is
-- rebuilt, keeping every sequence number).
CREATE TABLE changes_new (
    seq        INTEGER PRIMARY KEY AUTOINCREMENT,
    at         TEXT NOT NULL,
    kind       TEXT NOT NULL CHECK (kind IN ('accepted', 'superseded', 'retracted', 'reviewed', 'outputs', 'reproduced', 'sampling', 'key', 'task_set', 'heldout_variant')),
    bundle_id  TEXT REFERENCES submissions (bundle_id),
    agent_id   TEXT,
    detail     TEXT NOT NULL,
    task       TEXT,
    CHECK ((kind = 'outputs') = (bundle_id IS NULL AND agent_id IS NULL AND task IS NOT NULL))
);
INSERT INTO changes_new (seq, at, kind, bundle_id, agent_id, detail, task)
SELECT seq, at, kind, bundle_id, agent_id, detail, task FROM changes;
DROP TABLE changes;
ALTER TABLE changes_new RENAME TO changes;
