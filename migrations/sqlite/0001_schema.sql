-- The leaderboard's schema. Timestamps are RFC 3339 text in UTC; numbers that count
-- are 64-bit integers; the same schema as postgres/0001_schema.sql.

CREATE TABLE keys (
    keyid       TEXT PRIMARY KEY,          -- lowercase hex SHA-256 of the raw public key
    public_key  TEXT NOT NULL,             -- SubjectPublicKeyInfo PEM
    owner       TEXT NOT NULL,
    tier        TEXT NOT NULL CHECK (tier IN ('maintainer', 'submitter')),
    added_at    TEXT NOT NULL,
    revoked_at  TEXT
);

CREATE TABLE agents (
    id                 TEXT PRIMARY KEY,
    owner_keyid        TEXT NOT NULL REFERENCES keys (keyid),
    framework          TEXT NOT NULL,
    framework_version  TEXT,
    model              TEXT NOT NULL,
    model_id           TEXT,
    display_name       TEXT NOT NULL,
    url                TEXT,
    first_seen_at      TEXT NOT NULL
);

CREATE TABLE submissions (
    bundle_id          TEXT PRIMARY KEY,   -- SHA-256 of the manifest bytes
    agent_id           TEXT NOT NULL REFERENCES agents (id),
    keyid              TEXT NOT NULL REFERENCES keys (keyid),
    tier               TEXT NOT NULL,
    provenance         TEXT NOT NULL CHECK (provenance IN ('evaluated', 'published')),
    provenance_source  TEXT,
    benchmark_name     TEXT NOT NULL,
    benchmark_version  TEXT NOT NULL,
    task_set_digest    TEXT NOT NULL,
    runner_name        TEXT NOT NULL,
    runner_version     TEXT NOT NULL,
    created_at         TEXT NOT NULL,
    received_at        TEXT NOT NULL,
    superseded_by      TEXT REFERENCES submissions (bundle_id),
    run_count          BIGINT NOT NULL,
    artifact_bytes     BIGINT NOT NULL,
    envelope           BLOB NOT NULL       -- the signed envelope, exactly as received
);
CREATE INDEX submissions_current ON submissions (agent_id, benchmark_version) WHERE superseded_by IS NULL;

CREATE TABLE runs (
    id             INTEGER PRIMARY KEY,
    bundle_id      TEXT NOT NULL REFERENCES submissions (bundle_id),
    task           TEXT NOT NULL,
    hint           TEXT NOT NULL,
    attempt        BIGINT NOT NULL,
    outcome        TEXT NOT NULL,
    error_type     TEXT,
    file_recall    DOUBLE PRECISION,
    files_changed  TEXT,                   -- JSON array
    duration_s     DOUBLE PRECISION,
    cost_usd       DOUBLE PRECISION,
    metrics        TEXT NOT NULL,          -- JSON object
    UNIQUE (bundle_id, task, hint, attempt)
);

-- Content-addressed: one row, and one blob, however many runs share the bytes.
CREATE TABLE artifacts (
    digest      TEXT PRIMARY KEY,
    size        BIGINT NOT NULL,
    media_type  TEXT NOT NULL,
    stored_at   TEXT NOT NULL
);

CREATE TABLE run_artifacts (
    run_id  BIGINT NOT NULL REFERENCES runs (id),
    role    TEXT NOT NULL,
    digest  TEXT NOT NULL REFERENCES artifacts (digest),
    PRIMARY KEY (run_id, role)
);
CREATE INDEX run_artifacts_digest ON run_artifacts (digest);

-- Counts per submission, task and hint condition, kept at ingest so that no page
-- scans runs.
CREATE TABLE aggregates (
    bundle_id    TEXT NOT NULL REFERENCES submissions (bundle_id),
    task         TEXT NOT NULL,
    hint         TEXT NOT NULL,
    runs         BIGINT NOT NULL,          -- all runs
    counted      BIGINT NOT NULL,          -- runs that count (not infra_error)
    successes    BIGINT NOT NULL,
    executed     BIGINT NOT NULL,
    recall_sum   DOUBLE PRECISION NOT NULL,
    recall_runs  BIGINT NOT NULL,          -- counted runs that carry a file recall
    PRIMARY KEY (bundle_id, task, hint)
);

-- Append-only: what happened to the leaderboard, in order.
CREATE TABLE changes (
    seq        INTEGER PRIMARY KEY AUTOINCREMENT,
    at         TEXT NOT NULL,
    kind       TEXT NOT NULL CHECK (kind IN ('accepted', 'superseded', 'retracted')),
    bundle_id  TEXT NOT NULL REFERENCES submissions (bundle_id),
    agent_id   TEXT NOT NULL,
    detail     TEXT NOT NULL
);
