-- The failure explorer of one task, and the runs of one task in a page of agents,
-- without scanning every agent's rows.
CREATE INDEX error_counts_task ON error_counts (task);
