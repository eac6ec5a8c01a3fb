-- The loader service's control row and its status (src/loader/control.ts, docs/loader.md). The
-- loader service (src/loader/main.ts) runs with the stand; whether it consumes the world's topics is
-- the world DAGs' decision: world_initialize's start_ingest asks for 'consuming' after the world's
-- DDL, world_recreate's stop_ingest for 'stopped' before the consumer groups and topics go. Each
-- request bumps generation; the service acts on it and writes the generation it has reached into
-- loader.status, so a DAG task waits for exactly its own request. The service beats heartbeat_at
-- every second; a status older than a few seconds means the service is not running.
--
-- Until the loader owned its tables, runner migration 000013 created them with these statements. A
-- database built then keeps them and their rows: every statement here leaves what exists alone.
create schema if not exists loader;

create table if not exists loader.control (
  id smallint primary key default 1 check (id = 1),
  desired text not null check (desired in ('consuming', 'stopped')),
  generation bigint not null,
  requested_by text not null,
  requested_at timestamptz not null default now()
);

insert into loader.control (desired, generation, requested_by) values ('stopped', 0, 'loader migration 000001') on conflict (id) do nothing;

create table if not exists loader.status (
  id smallint primary key default 1 check (id = 1),
  state text not null check (state in ('starting', 'consuming', 'stopping', 'stopped', 'failed')),
  generation bigint not null,
  pid integer not null,
  detail text not null default '',
  heartbeat_at timestamptz not null default now()
);
