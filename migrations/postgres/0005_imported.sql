-- Results another harness ran and judged (provenance `imported`, e.g. Harbor's RExBench
-- adapter) are stored beside evaluated and published ones.
ALTER TABLE submissions DROP CONSTRAINT submissions_provenance_check;
ALTER TABLE submissions ADD CONSTRAINT submissions_provenance_check
    CHECK (provenance IN ('evaluated', 'imported', 'published'));
