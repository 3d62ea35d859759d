-- Who may read each task's runs' outputs (patches, logs, trajectories), where a
-- maintainer has published them or made them private again; a task without a row is
-- as its card says (`outputs`, default private).
CREATE TABLE task_outputs (
    task        TEXT PRIMARY KEY,
    outputs     TEXT NOT NULL CHECK (outputs IN ('public', 'private')),
    changed_at  TEXT NOT NULL
);

-- The change log records those changes too: they name a task, not a submission.
ALTER TABLE changes ALTER COLUMN bundle_id DROP NOT NULL;
ALTER TABLE changes ALTER COLUMN agent_id DROP NOT NULL;
ALTER TABLE changes ADD COLUMN task TEXT;
ALTER TABLE changes DROP CONSTRAINT changes_kind_check;
ALTER TABLE changes ADD CONSTRAINT changes_kind_check
    CHECK (kind IN ('accepted', 'superseded', 'retracted', 'reviewed', 'outputs'));
ALTER TABLE changes ADD CONSTRAINT changes_subject_check
    CHECK ((kind = 'outputs') = (bundle_id IS NULL AND agent_id IS NULL AND task IS NOT NULL));
