-- An agent's page and a comparison list every submission of the agent, current or not
-- (`Store::agent`); the index on current submissions cannot answer that, so PostgreSQL
-- read every submission for it (10 ms at 10,000 synthetic agents, twice a comparison).
CREATE INDEX submissions_agent ON submissions (agent_id, received_at);
