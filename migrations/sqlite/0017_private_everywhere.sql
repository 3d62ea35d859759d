-- Private means private everywhere (issue 50).
--
-- A session made from another (a sign-in link's ticket from a token, a browser's cookie
-- from that ticket) names it: it ends when that one ends or expires.
ALTER TABLE sessions ADD COLUMN parent TEXT REFERENCES sessions (token_hash);
CREATE INDEX sessions_parent ON sessions (parent);

-- The change log records keys registered and revoked (SQLite cannot alter a CHECK: the
-- table is rebuilt, keeping every sequence number).
CREATE TABLE changes_new (
    seq        INTEGER PRIMARY KEY AUTOINCREMENT,
    at         TEXT NOT NULL,
    kind       TEXT NOT NULL CHECK (kind IN ('accepted', 'superseded', 'retracted', 'reviewed', 'outputs', 'reproduced', 'sampling', 'key')),
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
