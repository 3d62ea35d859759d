-- Reproductions (spec §4d, §4e): the maintainers re-run a sample of every self-reported
-- submission.

-- The sampling keys, one per epoch: the commitment (SHA-256 of the key, hex) is public
-- from the epoch's start; the key itself only once the epoch has ended (revealed_at).
CREATE TABLE sampling_keys (
    epoch         BIGINT PRIMARY KEY,
    commitment    TEXT NOT NULL,
    secret        TEXT NOT NULL,          -- hex; published once revealed_at is set
    committed_at  TEXT NOT NULL,
    revealed_at   TEXT
);

-- The runs each submission's sample holds, with the epoch whose key chose them.
CREATE TABLE samples (
    run_id      BIGINT PRIMARY KEY REFERENCES runs (id),
    bundle_id   TEXT NOT NULL REFERENCES submissions (bundle_id),
    epoch       BIGINT NOT NULL REFERENCES sampling_keys (epoch),
    sampled_at  TEXT NOT NULL
);
CREATE INDEX samples_bundle ON samples (bundle_id);

-- A reproduction bundle: what it re-ran (`of`), who signed it, where and on what.
CREATE TABLE reproductions (
    bundle_id    TEXT PRIMARY KEY,        -- SHA-256 of the reproduction's manifest bytes
    of_bundle    TEXT NOT NULL REFERENCES submissions (bundle_id),
    keyid        TEXT NOT NULL REFERENCES keys (keyid),
    executor     TEXT NOT NULL,
    hardware     TEXT NOT NULL,           -- JSON, as the manifest gives it
    gpus         BIGINT NOT NULL,
    runner_version TEXT NOT NULL,
    created_at   TEXT NOT NULL,
    received_at  TEXT NOT NULL,
    envelope     BYTEA NOT NULL
);
CREATE INDEX reproductions_of ON reproductions (of_bundle);

-- Each re-run of a sampled run: its own outcome and evidence beside the submitted one.
CREATE TABLE reproduced_runs (
    run_id        BIGINT PRIMARY KEY REFERENCES samples (run_id),
    reproduction  TEXT NOT NULL REFERENCES reproductions (bundle_id),
    outcome       TEXT NOT NULL,
    error_type    TEXT,
    duration_s    DOUBLE PRECISION NOT NULL,
    metrics       TEXT NOT NULL,          -- JSON object
    held          BIGINT NOT NULL         -- 1: the same final success as submitted
);
CREATE TABLE reproduced_artifacts (
    run_id  BIGINT NOT NULL REFERENCES reproduced_runs (run_id),
    role    TEXT NOT NULL,
    digest  TEXT NOT NULL REFERENCES artifacts (digest),
    PRIMARY KEY (run_id, role)
);
CREATE INDEX reproduced_artifacts_digest ON reproduced_artifacts (digest);

-- Each submission's sample at a glance, for the board: sampled, re-run, and re-run
-- with another final success.
ALTER TABLE submissions ADD COLUMN sampled BIGINT NOT NULL DEFAULT 0;
ALTER TABLE submissions ADD COLUMN reproduced BIGINT NOT NULL DEFAULT 0;
ALTER TABLE submissions ADD COLUMN differed BIGINT NOT NULL DEFAULT 0;

-- The change log records reproductions too.
ALTER TABLE changes DROP CONSTRAINT changes_kind_check;
ALTER TABLE changes ADD CONSTRAINT changes_kind_check
    CHECK (kind IN ('accepted', 'superseded', 'retracted', 'reviewed', 'outputs', 'reproduced', 'sampling'));
