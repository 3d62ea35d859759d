-- Flagged successes by check, kept as the other failure counts are: per submission and
-- check, how many of its successes a finding of that check, not dismissed, flags. The
-- failure explorer's "Successes in doubt" reads these (summed over the current
-- submissions) instead of counting distinct runs across every finding at read time.
-- Ingest writes a submission's rows; a review, or a reproduction's finding, that changes
-- which checks flag a run moves them in the same transaction.
CREATE TABLE flagged_checks (
    bundle_id   TEXT NOT NULL REFERENCES submissions (bundle_id),
    check_name  TEXT NOT NULL,
    runs        BIGINT NOT NULL,
    PRIMARY KEY (bundle_id, check_name)
);

INSERT INTO flagged_checks (bundle_id, check_name, runs)
SELECT r.bundle_id, f.check_name, COUNT(DISTINCT f.run_id)
FROM findings f JOIN runs r ON r.id = f.run_id
WHERE r.outcome = 'success' AND (f.review IS NULL OR f.review <> 'dismissed')
GROUP BY r.bundle_id, f.check_name;

-- The reviewed findings, few beside the rest: what counts the confirmed successes.
CREATE INDEX findings_reviewed ON findings (review, run_id) WHERE review IS NOT NULL;
