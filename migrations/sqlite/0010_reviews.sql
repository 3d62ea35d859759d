-- A maintainer's review of each finding (confirmed: the success is not earned;
-- dismissed: the finding no longer flags its run), with the note that says why.
ALTER TABLE findings ADD COLUMN review TEXT CHECK (review IN ('confirmed', 'dismissed'));
ALTER TABLE findings ADD COLUMN review_note TEXT;
ALTER TABLE findings ADD COLUMN reviewed_at TEXT;

-- Flagged successes (a success with a finding not dismissed), kept beside the counts
-- they qualify so that the strict view (flagged successes count as failures) is read
-- as quickly as the reported one. A review that changes whether a run is flagged
-- moves these in the same transaction.
ALTER TABLE aggregates ADD COLUMN flagged BIGINT NOT NULL DEFAULT 0;
ALTER TABLE totals ADD COLUMN flagged BIGINT NOT NULL DEFAULT 0;
ALTER TABLE task_totals ADD COLUMN flagged BIGINT NOT NULL DEFAULT 0;

UPDATE aggregates SET flagged = (
    SELECT COUNT(*) FROM runs r
    WHERE r.bundle_id = aggregates.bundle_id AND r.task = aggregates.task AND r.hint = aggregates.hint
      AND r.outcome = 'success' AND EXISTS (SELECT 1 FROM findings f WHERE f.run_id = r.id)
);
UPDATE totals SET flagged = (
    SELECT COALESCE(SUM(g.flagged), 0) FROM aggregates g
    WHERE g.bundle_id = totals.bundle_id AND g.hint = totals.hint
);
UPDATE task_totals SET flagged = (
    SELECT COALESCE(SUM(g.flagged), 0) FROM aggregates g JOIN submissions s ON s.bundle_id = g.bundle_id
    WHERE s.superseded_by IS NULL AND g.task = task_totals.task AND g.hint = task_totals.hint
);

-- The change log records reviews too: its kinds are checked, so the table is rebuilt
-- with the new kind (SQLite cannot alter a CHECK), keeping every sequence number.
CREATE TABLE changes_new (
    seq        INTEGER PRIMARY KEY AUTOINCREMENT,
    at         TEXT NOT NULL,
    kind       TEXT NOT NULL CHECK (kind IN ('accepted', 'superseded', 'retracted', 'reviewed')),
    bundle_id  TEXT NOT NULL REFERENCES submissions (bundle_id),
    agent_id   TEXT NOT NULL,
    detail     TEXT NOT NULL
);
INSERT INTO changes_new (seq, at, kind, bundle_id, agent_id, detail)
SELECT seq, at, kind, bundle_id, agent_id, detail FROM changes;
DROP TABLE changes;
ALTER TABLE changes_new RENAME TO changes;
