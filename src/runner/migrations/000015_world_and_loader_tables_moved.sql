-- Runner migrations 000005 (schema ledger), 000008 (schema catalogue) and 000013 (loader control)
-- are their owners' migrations now: src/world/migrations (schema world) and src/loader/migrations
-- (schema loader), each with its own ledger. This file changes nothing of the runner's; it exists
-- so that code from before the move, which would look for runner.schema_ledger, refuses this
-- database (it knows only up to 000014) instead of running world tasks against tables that moved.
comment on schema runner is 'the DAG runner''s engine (src/runner/migrations); the world''s tables are in schema world, the loader''s in schema loader';
