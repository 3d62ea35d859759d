-- Private means private everywhere (issue 50).
--
-- A session made from another (a sign-in link's ticket from a token, a browser's cookie
-- from that ticket) names it: it ends when that one ends or expires.
ALTER TABLE sessions ADD COLUMN parent TEXT REFERENCES sessions (token_hash);
CREATE INDEX sessions_parent ON sessions (parent);

-- The change log records keys registered and revoked.
ALTER TABLE changes DROP CONSTRAINT changes_kind_check;
ALTER TABLE changes ADD CONSTRAINT changes_kind_check
    CHECK (kind IN ('accepted', 'superseded', 'retracted', 'reviewed', 'outputs', 'reproduced', 'sampling', 'key'));
