-- A patch's identity (bundle spec §5b): the digest of what it changes (its files and the
-- lines it adds and removes, whitespace aside), not of how it is written, for each patch
-- artifact the server has read. Findings that follow a patch (not reproduced, not
-- generalised, the same patch twice in a submission) follow its identity, so that a copy
-- behind a junk first line, or re-indented, is the same patch. A patch stored before
-- this has its identity computed from its blob when the server starts.
CREATE TABLE patch_identities (
    digest   TEXT NOT NULL PRIMARY KEY,
    identity TEXT NOT NULL
);
CREATE INDEX patch_identities_identity ON patch_identities (identity);

-- Regrade shopping (issue 75): how many of a submission's verdicts a Harbor regrade
-- changed (spec §4i), which its row says; each such run is always sampled (§4e).
ALTER TABLE submissions ADD COLUMN regrades_flipped BIGINT NOT NULL DEFAULT 0;
UPDATE submissions SET regrades_flipped = (SELECT COUNT(*) FROM runs r WHERE r.bundle_id = submissions.bundle_id
    AND r.regraded_from IS NOT NULL AND r.regraded_from <> r.outcome);
