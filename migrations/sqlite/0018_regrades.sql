-- A run made from a Harbor regrade (bundle spec section 4i): the outcome the agent run
-- had before the regrade judged its outputs again. NULL for every other run.
ALTER TABLE runs ADD COLUMN regraded_from TEXT;
