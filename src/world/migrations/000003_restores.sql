-- The world's restores: one row per world_restore that put a snapshot back (src/snapshots/world-snapshot.ts). The
-- position's history (runner.variable_history) says -1, then the snapshot's position, by the
-- world_restore run; this row says which snapshot that was and what the position was before it.
-- Snapshots themselves are files under the stand's state directory (docs/world.md "Snapshots").
create table if not exists world.restores (
  id                bigint generated always as identity primary key,
  snapshot          text not null,
  snapshot_taken_at timestamptz not null,
  from_position     text,
  to_position       integer not null,
  dag_id            text not null,
  run_id            text not null,
  restored_at       timestamptz not null default clock_timestamp()
);

create index if not exists restores_latest on world.restores (restored_at desc, id desc);
