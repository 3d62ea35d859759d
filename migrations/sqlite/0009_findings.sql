-- Integrity findings (the bundle format's section 4a): why a reader should doubt a
-- run's outcome, where the evidence is, and who found it: `submitter` (signed in the
-- bundle, by the runner or the importer) or `server` (the server's own checks at
-- ingest). `position` is the finding's place in its finder's list for the run.
CREATE TABLE findings (
    run_id      BIGINT NOT NULL REFERENCES runs (id),
    found_by    TEXT NOT NULL CHECK (found_by IN ('submitter', 'server')),
    position    BIGINT NOT NULL,
    check_name  TEXT NOT NULL,
    message     TEXT NOT NULL,
    artifact    TEXT,                      -- a role of the run's artifacts
    line        BIGINT,                    -- in that artifact, from 1
    PRIMARY KEY (run_id, found_by, position)
);
