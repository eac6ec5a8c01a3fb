-- Pause points: a runner started with fail points on (runner.fail_points in the stand config; the
-- test stand only) holds a try of (dag_id, task_id) before its function runs or after it succeeded
-- (before its result is written), until a test releases the point. Fault tests arm them to strike
-- at an exact moment of a run (a Postgres restart at every task boundary, the runner killed while a
-- task runs) instead of polling for a window that may close first. Each point holds one try, once.
-- A runner with fail points off never reads this table.
create table runner.pause_points (
  id          bigserial primary key,
  dag_id      text not null,
  task_id     text not null,
  phase       text not null check (phase in ('before', 'after')),
  note        text,
  armed_at    timestamptz not null default now(),
  -- set when a try reaches the point and starts waiting: which run, task and try
  reached_at  timestamptz,
  reached_by  text,
  -- set by the test: the try goes on
  released_at timestamptz
);
create index pause_points_armed on runner.pause_points (dag_id, task_id, phase) where reached_at is null;

-- Takes the oldest armed, unreached pause point of (dag, task, phase); its id when the try must wait.
create function runner.reach_pause_point(p_dag_id text, p_task_id text, p_phase text, p_by text)
returns bigint language sql as $$
  with armed as (
    select id from runner.pause_points
     where dag_id = p_dag_id and task_id = p_task_id and phase = p_phase and reached_at is null
     order by id limit 1 for update skip locked
  )
  update runner.pause_points p set reached_at = now(), reached_by = p_by from armed where p.id = armed.id
  returning p.id
$$;
