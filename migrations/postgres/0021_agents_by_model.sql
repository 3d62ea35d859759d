-- An agent's page lists the same agent (framework and model) under other agent ids
-- (`Store::same_agent_elsewhere`). Without an index on the model, the database read every
-- current submission for it: 10 ms of an agent page's 21 ms at 10,000 synthetic agents
-- (SQLite's plan: SCAN s USING INDEX submissions_current).
CREATE INDEX agents_model ON agents (model, framework);
