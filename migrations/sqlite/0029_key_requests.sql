-- Key requests (the community's way in): a submitter asks for a key with proof of
-- possession; it may submit while pending (its bundles are held, shown to it and to the
-- maintainers only), and the maintainers approve it (choosing the tier) or decline it
-- (with a reason; its held bundles are removed).

-- A pending key is in the registry so that it can sign in, but verifies nothing on the
-- board and is listed by no public answer until it is approved.
ALTER TABLE keys ADD COLUMN pending BIGINT NOT NULL DEFAULT 0;

CREATE TABLE key_requests (
    id            INTEGER PRIMARY KEY AUTOINCREMENT,
    keyid         TEXT NOT NULL UNIQUE,
    public_key    TEXT NOT NULL,
    owner         TEXT NOT NULL,
    -- The owner as a reader sees it (NFKC, UTS #39 skeleton, case; letters and digits
    -- alone): one owner per reading.
    owner_seen    TEXT NOT NULL,
    url           TEXT,
    contact       TEXT NOT NULL,
    note          TEXT,
    address       TEXT NOT NULL,
    status        TEXT NOT NULL CHECK (status IN ('pending', 'approved', 'declined')),
    tier          TEXT,
    reason        TEXT,
    requested_at  TEXT NOT NULL,
    decided_at    TEXT,
    -- Unix seconds, for the per-address allowance.
    requested_unix BIGINT NOT NULL
);
CREATE INDEX key_requests_status ON key_requests (status, id);
CREATE INDEX key_requests_address ON key_requests (address, requested_unix);
CREATE INDEX key_requests_owner_seen ON key_requests (owner_seen);

-- The challenges a key not yet registered signs to request registration.
CREATE TABLE key_request_challenges (
    challenge   TEXT PRIMARY KEY,
    keyid       TEXT NOT NULL,
    expires_at  BIGINT NOT NULL,
    used_at     BIGINT
);

-- A pending key's bundles, verified and kept whole (a blob) until the request is decided.
CREATE TABLE held_bundles (
    request_id   BIGINT NOT NULL REFERENCES key_requests (id),
    bundle_id    TEXT NOT NULL,
    blob         TEXT NOT NULL,
    bytes        BIGINT NOT NULL,
    agent_id     TEXT NOT NULL,
    runs         BIGINT NOT NULL,
    successes    BIGINT NOT NULL,
    received_at  TEXT NOT NULL,
    PRIMARY KEY (request_id, bundle_id)
);
CREATE INDEX held_bundles_blob ON held_bundles (blob);

-- The access log records the desk's actions too: a maintainer's decision, by whom
-- (SQLite cannot alter a CHECK: the table is rebuilt, keeping every sequence number).
CREATE TABLE access_log_new (
    seq      INTEGER PRIMARY KEY AUTOINCREMENT,
    at       TEXT NOT NULL,
    reader   TEXT NOT NULL,
    keyid    TEXT,
    via      TEXT NOT NULL CHECK (via IN ('page', 'api', 'artifact', 'desk')),
    run_id   BIGINT,
    digest   TEXT,
    action   TEXT,
    CHECK (run_id IS NOT NULL OR digest IS NOT NULL OR action IS NOT NULL)
);
INSERT INTO access_log_new (seq, at, reader, keyid, via, run_id, digest)
SELECT seq, at, reader, keyid, via, run_id, digest FROM access_log;
DROP TABLE access_log;
ALTER TABLE access_log_new RENAME TO access_log;
