-- The runner's own tables. graphile-worker only carries jobs (and deletes them when done), so
-- every fact worth keeping (runs, task states, tries, logs, variables) lives here.

create table runner.dags (
  dag_id            text primary key,
  is_paused         boolean not null,
  description       text not null default '',
  schedule          text,
  max_active_runs   integer not null check (max_active_runs >= 1),
  task_ids          text[] not null,
  fileloc           text not null default '',
  first_seen_at     timestamptz not null default now(),
  last_seen_at      timestamptz not null default now(),
  -- the schedule instant the last scheduled run was created for (no catch-up beyond it)
  last_scheduled_at timestamptz
);

create table runner.dag_runs (
  id             bigserial primary key,
  dag_id         text not null references runner.dags (dag_id),
  run_id         text not null,
  state          text not null check (state in ('queued', 'running', 'success', 'failed')),
  run_type       text not null check (run_type in ('manual', 'scheduled', 'triggered')),
  triggered_by   text not null,
  conf           jsonb not null default '{}'::jsonb,
  logical_date   timestamptz,
  queued_at      timestamptz not null default clock_timestamp(),
  start_date     timestamptz,
  end_date       timestamptz,
  note           text,
  -- every task id the run declares at creation; success needs all of them terminal
  manifest       text[] not null,
  parent_dag_id  text,
  parent_run_id  text,
  parent_task_id text,
  parent_ti_id   bigint,
  unique (dag_id, run_id)
);
-- queued runs start in trigger order (id), per DAG
create index dag_runs_by_dag_state on runner.dag_runs (dag_id, state, id);
create index dag_runs_by_dag_queued_at on runner.dag_runs (dag_id, queued_at desc);

create table runner.task_instances (
  id               bigserial primary key,
  run_pk           bigint not null references runner.dag_runs (id) on delete cascade,
  task_id          text not null,
  -- dependencies frozen at run creation, so a changed definition never confuses a live run
  upstream         text[] not null,
  downstream       text[] not null,
  -- the same edges as task instance ids: every hot-path lookup goes by primary key, so plans
  -- stay index lookups whatever the planner's statistics say about a run's size
  downstream_ids   bigint[] not null default '{}',
  -- upstream tasks not yet terminal; the task becomes ready when this reaches 0
  pending_upstream integer not null,
  upstream_skipped boolean not null default false,
  state            text not null check (state in ('scheduled', 'queued', 'running', 'deferred', 'success',
                                                  'failed', 'skipped', 'upstream_failed', 'up_for_retry')),
  try_number       integer not null default 0,
  max_tries        integer not null check (max_tries >= 1),
  queued_at        timestamptz,
  start_date       timestamptz,
  end_date         timestamptz,
  worker           text,
  error            text,
  attempt_token    uuid,
  lease_expires_at timestamptz,
  job_id           bigint,
  next_retry_at    timestamptz,
  child_dag_id     text,
  child_run_id     text,
  child_run_pk     bigint references runner.dag_runs (id),
  unique (run_pk, task_id)
);
-- the engine only ever scans the unfinished tasks of a run; finished ones drop out of this index
create index task_instances_unfinished on runner.task_instances (run_pk)
  where state not in ('success', 'failed', 'skipped', 'upstream_failed');
create index task_instances_leases on runner.task_instances (lease_expires_at) where state = 'running';
-- the reaper's safety net for waiting triggers whose resume job was lost
create index task_instances_deferred on runner.task_instances (child_run_pk) where state = 'deferred';

alter table runner.dag_runs
  add constraint dag_runs_parent_ti_fk foreign key (parent_ti_id) references runner.task_instances (id);

create table runner.task_tries (
  ti_id         bigint not null references runner.task_instances (id) on delete cascade,
  try_number    integer not null,
  state         text not null check (state in ('running', 'deferred', 'success', 'failed', 'lost')),
  worker        text,
  attempt_token uuid not null,
  start_date    timestamptz not null,
  end_date      timestamptz,
  error         text,
  primary key (ti_id, try_number)
);

create table runner.task_log_lines (
  id         bigserial primary key,
  ti_id      bigint not null references runner.task_instances (id) on delete cascade,
  try_number integer not null,
  at         timestamptz not null,
  level      text not null,
  message    text not null
);
create index task_log_lines_by_try on runner.task_log_lines (ti_id, try_number, id);

create table runner.variables (
  key         text primary key,
  value       text not null,
  description text,
  updated_at  timestamptz not null default clock_timestamp()
);

create table runner.variable_history (
  id         bigserial primary key,
  key        text not null,
  old_value  text,
  new_value  text,
  changed_at timestamptz not null default clock_timestamp(),
  changed_by text not null,
  dag_id     text,
  run_id     text
);
create index variable_history_by_key on runner.variable_history (key, id);

-- one row per runner process; health() reads the newest beat, and the reaper releases the
-- graphile-worker locks of a process whose beat stopped
create table runner.heartbeats (
  worker_id           text primary key,
  hostname            text not null,
  pid                 integer not null,
  started_at          timestamptz not null default clock_timestamp(),
  last_beat_at        timestamptz not null default clock_timestamp(),
  graphile_worker_ids text[] not null default '{}'
);
