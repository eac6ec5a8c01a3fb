-- The world's catalogue as built: every column of every table of the world's databases on every
-- node, recorded by world_initialize right after its DDL. Schema status and world_initialize on a
-- ready position compare it with the live system.columns of each node: a database, table or column
-- that is gone is drift, whatever the ledger of applied files says.
--
-- Until the world owned its tables, runner migration 000008 created this one as
-- runner.schema_catalogue. A database built then keeps it: the table moves here whole, and the
-- create below finds it already there. On an empty database the create makes it.
do $$
begin
  if to_regclass('runner.schema_catalogue') is not null then
    alter table runner.schema_catalogue set schema world;
  end if;
end
$$;

create table if not exists world.schema_catalogue (
  id          bigint generated always as identity primary key,
  run_id      text not null,
  node        text not null,
  database    text not null,
  table_name  text not null,
  column_name text not null,
  column_type text not null,
  recorded_at timestamptz not null default clock_timestamp()
);

create index if not exists schema_catalogue_by_run on world.schema_catalogue (run_id);
create index if not exists schema_catalogue_latest on world.schema_catalogue (recorded_at desc, id desc);
