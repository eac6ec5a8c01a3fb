-- The schema ledger: every DDL file world_initialize applied to ClickHouse, one row per apply.
-- The world's build is the set of rows of the latest run that applied DDL; GET /api/v2/system/schema
-- compares it with sql/ddl/ to show drift (make up never applies changed DDL, it only reports it).
--
-- Until the world owned its tables, runner migration 000005 created this one as runner.schema_ledger.
-- A database built then keeps it: the table moves here whole (rows, identity sequence, constraints,
-- indexes), and the create below finds it already there. On an empty database the create makes it.
create schema if not exists world;

do $$
begin
  if to_regclass('runner.schema_ledger') is not null then
    alter table runner.schema_ledger set schema world;
  end if;
end
$$;

create table if not exists world.schema_ledger (
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

create index if not exists schema_ledger_latest on world.schema_ledger (applied_at desc, id desc);
create index if not exists schema_ledger_run on world.schema_ledger (run_id);
