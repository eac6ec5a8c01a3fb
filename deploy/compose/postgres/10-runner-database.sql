-- Runs once, when the postgres-data volume is empty (the postgres image's own first-boot hook,
-- inside the long-lived postgres service; not a one-shot service). It only makes the empty
-- metadata database of the DAG runner exist, like the accounts file makes ClickHouse accounts
-- exist; the migrations of its owners (runner, world, loader) create everything inside it.
-- Names match postgres.runner_database and postgres.user in stand.compose.yaml.
CREATE DATABASE runner OWNER stand;
