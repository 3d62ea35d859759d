-- The sample sized to catch (spec §4e): the rule each submission was sampled by (its
-- share of fakes, probability and cap, as JSON), so that anyone can recompute its sample
-- after the reveal whatever the server's settings are now; and what its sample of
-- successes catches, and of what share (the least, over its conditions with successes, of the chance that
-- it takes a fake were the rule's share of them fake). NULL where it was not sampled by
-- this rule: stored before it (one success per condition), or not sampled at all.
ALTER TABLE submissions ADD COLUMN sample_rule TEXT;
ALTER TABLE submissions ADD COLUMN sample_catches DOUBLE PRECISION;
ALTER TABLE submissions ADD COLUMN sample_share DOUBLE PRECISION;

-- A caught lie costs the submission (issue 75): a run queued because a refutation of
-- another run of its submission made it unverified names that run; each submission
-- counts its runs with a standing refutation and its successes a standing `unverified`
-- finding flags, so that a row, and its submitter's other rows, can say so.
ALTER TABLE samples ADD COLUMN escalated_by BIGINT;
ALTER TABLE submissions ADD COLUMN refuted BIGINT NOT NULL DEFAULT 0;
ALTER TABLE submissions ADD COLUMN unverified BIGINT NOT NULL DEFAULT 0;
CREATE INDEX submissions_refuted_key ON submissions (keyid) WHERE refuted > 0;

-- Every sample rule the server has used, from when: a submission's rule must be the one
-- in force when it arrived (or its enlarged form), which anyone can check
-- (`GET /api/v1/sampling`, `sizing_history`).
CREATE TABLE sample_rules (
    since TEXT NOT NULL PRIMARY KEY,
    rule  TEXT NOT NULL
);
