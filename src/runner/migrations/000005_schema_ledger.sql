-- The schema ledger: every DDL file world_initialize applied to ClickHouse, one row per apply.
-- The world's build is the set of rows of the latest run that applied DDL; GET /api/v2/system/schema
-- compares it with sql/ddl/ to show drift (make up never applies changed DDL, it only reports it).

create table runner.schema_ledger (
  id             bigint generated always as identity primary key,
  file           text not null,
  -- sha256 of the file's text as written (before template rendering) and of the data it inlines, lowercase hex
  checksum       text not null check (checksum ~ '^[0-9a-f]{64}$'),
  statements     integer not null check (statements >= 0),
  dag_id         text not null,
  run_id         text not null,
  task_id        text not null,
  applied_at     timestamptz not null default clock_timestamp(),
  -- SELECT version() of the node the file was applied from
  server_version text not null
);

create index schema_ledger_latest on runner.schema_ledger (applied_at desc, id desc);
create index schema_ledger_run on runner.schema_ledger (run_id);
