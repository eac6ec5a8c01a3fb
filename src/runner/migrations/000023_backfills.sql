-- Airflow 3's backfills: runs of a scheduled DAG for the schedule's past instants in a window
-- (src/runner/backfills.ts). A backfill holds one row per logical date in the order they run
-- (sort_ordinal); a periodic step decides the next dates while fewer than the backfill's
-- max_active_runs of its runs are active: each gets a new run of type backfill, a cleared run
-- (reprocess_behavior), or Airflow's reason it was skipped. Unlike Airflow, which creates every run
-- at once, runs are made as room opens, so a long window never floods the queue.

alter table runner.dag_runs drop constraint dag_runs_run_type_check;
alter table runner.dag_runs add constraint dag_runs_run_type_check
  check (run_type in ('manual', 'scheduled', 'triggered', 'backfill'));
-- each date of a backfill asks which runs the DAG has at that logical date
create index dag_runs_by_dag_logical_date on runner.dag_runs (dag_id, logical_date);

create table runner.backfills (
  id                    bigserial primary key,
  dag_id                text not null references runner.dags (dag_id),
  from_date             timestamptz not null,
  to_date               timestamptz not null,
  -- null: none was given (new runs take the DAG's defaults, cleared runs keep their own conf)
  dag_run_conf          jsonb,
  -- paused: no new runs are made; the active ones finish
  is_paused             boolean not null default false,
  reprocess_behavior    text not null check (reprocess_behavior in ('none', 'failed', 'completed')),
  max_active_runs       integer not null check (max_active_runs >= 1),
  run_backwards         boolean not null,
  run_on_latest_version boolean not null,
  triggering_user_name  text,
  created_at            timestamptz not null default clock_timestamp(),
  updated_at            timestamptz not null default clock_timestamp(),
  -- every date decided and its run ended, or cancelled
  completed_at          timestamptz,
  check (from_date <= to_date)
);
-- Airflow's rule of one backfill at a time per DAG, kept by the index rather than by a read, so
-- two creates at once cannot both pass
create unique index backfills_one_active_per_dag on runner.backfills (dag_id) where completed_at is null;
create index backfills_by_dag on runner.backfills (dag_id, id);
-- touch_dag_run (000020) only stamps updated_at: the same trigger serves backfills
create trigger backfills_touch before update on runner.backfills
  for each row when (old.* is distinct from new.*) execute function runner.touch_dag_run();

create table runner.backfill_dag_runs (
  id               bigserial primary key,
  backfill_id      bigint not null references runner.backfills (id) on delete cascade,
  logical_date     timestamptz not null,
  sort_ordinal     integer not null check (sort_ordinal >= 1),
  -- the run made or cleared for the date (null when skipped, not yet decided, or deleted since)
  dag_run_pk       bigint references runner.dag_runs (id) on delete set null,
  -- Airflow's BackfillDagRunExceptionReason: why no run was made for the date
  exception_reason text check (exception_reason in ('in flight', 'already exists')),
  -- null: the date's turn has not come
  decided_at       timestamptz,
  unique (backfill_id, sort_ordinal),
  unique (backfill_id, logical_date)
);
create index backfill_dag_runs_pending on runner.backfill_dag_runs (backfill_id, sort_ordinal) where decided_at is null;
create index backfill_dag_runs_by_run on runner.backfill_dag_runs (dag_run_pk) where dag_run_pk is not null;

-- Cancelling a backfill fails its queued runs, as Airflow does (the running ones finish). The run
-- locks in id order, then the scheduler lock (7301, 0): 000009's order. A queued run has no child
-- runs, so its family is itself; the state is read again under the locks, as a run may have started.
create function runner.fail_queued_backfill_runs(p_backfill_id bigint, p_by text)
returns integer language plpgsql as $$
declare
  v_pk bigint;
  v_pks bigint[];
  v_failed integer := 0;
begin
  select coalesce(array_agg(b.dag_run_pk order by b.dag_run_pk), '{}') into v_pks
    from runner.backfill_dag_runs b join runner.dag_runs r on r.id = b.dag_run_pk
   where b.backfill_id = p_backfill_id and r.state = 'queued';
  foreach v_pk in array v_pks loop
    perform pg_advisory_xact_lock(v_pk);
  end loop;
  perform pg_advisory_xact_lock(7301, 0);
  foreach v_pk in array v_pks loop
    if (select state from runner.dag_runs where id = v_pk) = 'queued' then
      perform runner.mark_one_run(v_pk, 'failed', p_by);
      v_failed := v_failed + 1;
    end if;
  end loop;
  return v_failed;
end $$;
