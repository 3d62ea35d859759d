-- Task sets a maintainer registered beside those the server's cards give (bundle spec
-- §5a): a bundle must name one of them, with its benchmark name and version, to be taken.
CREATE TABLE task_sets (
    digest TEXT NOT NULL,
    name TEXT NOT NULL,
    version TEXT NOT NULL,
    registered_at TEXT NOT NULL,
    note TEXT NOT NULL,
    PRIMARY KEY (digest, name, version)
);

-- The change log records each registration.
ALTER TABLE changes DROP CONSTRAINT changes_kind_check;
ALTER TABLE changes ADD CONSTRAINT changes_kind_check
    CHECK (kind IN ('accepted', 'superseded', 'retracted', 'reviewed', 'outputs', 'reproduced', 'sampling', 'key', 'task_set'));
