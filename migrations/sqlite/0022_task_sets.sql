-- Task sets a maintainer registered beside those the server's cards give (bundle spec
-- §5a): a bundle must name one of them, with its benchmark name and version, to be taken.
CREATE TABLE task_sets (
    digest TEXT NOT NULL,
    name TEXT NOT NULL,
    version TEXT NOT NULL,
    registered_at TEXT NOT NULL,
    note TEXT NOT NULL,
    PRIMARY KEY (digest, name, version)
);

-- The change log records each registration (SQLite cannot alter a CHECK: the table is
-- rebuilt, keeping every sequence number).
CREATE TABLE changes_new (
    seq        INTEGER PRIMARY KEY AUTOINCREMENT,
    at         TEXT NOT NULL,
    kind       TEXT NOT NULL CHECK (kind IN ('accepted', 'superseded', 'retracted', 'reviewed', 'outputs', 'reproduced', 'sampling', 'key', 'task_set')),
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
