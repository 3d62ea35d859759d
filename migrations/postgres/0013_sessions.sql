-- Signing in to read private outputs: the challenges a registered key signs, the
-- sessions they open (a token for the API, a one-time ticket, a browser's cookie), and
-- every read of private content. Times are Unix seconds, compared as numbers.
CREATE TABLE login_challenges (
    challenge   TEXT PRIMARY KEY,          -- 32 random bytes, in hex
    keyid       TEXT NOT NULL REFERENCES keys (keyid),
    expires_at  BIGINT NOT NULL,
    used_at     BIGINT
);

-- A session is named by the SHA-256 of its secret: the secret itself is never stored.
CREATE TABLE sessions (
    token_hash  TEXT PRIMARY KEY,
    kind        TEXT NOT NULL CHECK (kind IN ('token', 'ticket', 'browser')),
    -- The key that signed in; none for a maintainer's sign-in link from the admin command.
    keyid       TEXT REFERENCES keys (keyid),
    maintainer  BIGINT NOT NULL CHECK (maintainer IN (0, 1)),
    created_at  BIGINT NOT NULL,
    expires_at  BIGINT NOT NULL,
    ended_at    BIGINT,
    CHECK (keyid IS NOT NULL OR maintainer = 1)
);
CREATE INDEX sessions_keyid ON sessions (keyid);

-- Who read which private run or artifact, when, and how.
CREATE TABLE access_log (
    seq      BIGSERIAL PRIMARY KEY,
    at       TEXT NOT NULL,
    reader   TEXT NOT NULL,
    keyid    TEXT,
    via      TEXT NOT NULL CHECK (via IN ('page', 'api', 'artifact')),
    run_id   BIGINT,
    digest   TEXT,
    CHECK (run_id IS NOT NULL OR digest IS NOT NULL)
);
