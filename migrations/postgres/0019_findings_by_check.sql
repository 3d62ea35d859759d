-- The runs of an agent that did not reproduce are found at each of its ingests by their
-- findings' check (`reproductions::not_reproduced_before`); without this index that was
-- a scan of every finding on the board, which grew with it (12 ms at 1,000 synthetic
-- agents, 120 ms at 10,000).
CREATE INDEX findings_check ON findings (check_name, found_by, run_id);
