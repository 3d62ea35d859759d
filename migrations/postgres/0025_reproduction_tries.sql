-- A re-run the runner could not complete (spec §4d): a reproduction may carry a sampled
-- run that ended `infra_error`, which is one try. The run stays in the queue until a
-- re-run ends in a counted outcome, or its tries reach the server's
-- `REXBENCH_REPRODUCTION_TRIES`: then it is reproduced as not reproduced (a patch cannot
-- make itself un-re-runnable).
CREATE TABLE reproduction_tries (
    run_id        BIGINT NOT NULL REFERENCES samples (run_id),
    reproduction  TEXT NOT NULL REFERENCES reproductions (bundle_id),
    error_type    TEXT,
    tried_at      TEXT NOT NULL,
    PRIMARY KEY (run_id, reproduction)
);

-- What each try left (its patch, logs, notes): the maintainers' to read, as a re-run's
-- evidence is, by the run it tried.
CREATE TABLE reproduction_try_artifacts (
    run_id        BIGINT NOT NULL,
    reproduction  TEXT NOT NULL,
    role          TEXT NOT NULL,
    digest        TEXT NOT NULL REFERENCES artifacts (digest),
    PRIMARY KEY (run_id, reproduction, role),
    FOREIGN KEY (run_id, reproduction) REFERENCES reproduction_tries (run_id, reproduction)
);
CREATE INDEX reproduction_try_artifacts_digest ON reproduction_try_artifacts (digest);
