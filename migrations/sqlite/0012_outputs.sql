-- Who may read each task's runs' outputs (patches, logs, trajectories), where a
-- maintainer has published them or made them private again; a task without a row is
-- as its card says (`outputs`, default private).
CREATE TABLE task_outputs (
    task        TEXT PRIMARY KEY,
    outputs     TEXT NOT NULL CHECK (outputs IN ('public', 'private')),
    changed_at  TEXT NOT NULL
);

-- The change log records those changes too: they name a task, not a submission, so
-- the table is rebuilt with the bundle and agent optional and the task beside them
-- (SQLite cannot alter a CHECK or a NOT NULL), keeping every sequence number.
CREATE TABLE changes_new (
    seq        INTEGER PRIMARY KEY AUTOINCREMENT,
    at         TEXT NOT NULL,
    kind       TEXT NOT NULL CHECK (kind IN ('accepted', 'superseded', 'retracted', 'reviewed', 'outputs')),
    bundle_id  TEXT REFERENCES submissions (bundle_id),
    agent_id   TEXT,
    detail     TEXT NOT NULL,
    task       TEXT,
    CHECK ((kind = 'outputs') = (bundle_id IS NULL AND agent_id IS NULL AND task IS NOT NULL))
);
INSERT INTO changes_new (seq, at, kind, bundle_id, agent_id, detail)
SELECT seq, at, kind, bundle_id, agent_id, detail FROM changes;
DROP TABLE changes;
ALTER TABLE changes_new RENAME TO changes;
