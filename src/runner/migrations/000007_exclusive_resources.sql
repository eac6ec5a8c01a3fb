-- Exclusive resources: a DAG names resources it holds for the whole of each run (the world DAGs hold
-- `world`). A queued run whose resource is held by another run stays queued (no worker slot) and
-- says why in waiting_for; a run started by a waiting trigger runs inside its ancestors' hold
-- (world_recreate -> world_initialize, world_next_day -> etl_pipeline -> dds_transform), so a
-- chain never waits for itself. A run's holds go when it ends, and the runs waiting for them start
-- in trigger order.
--
-- Locking: every start decision, run creation (000006) and run end takes one scheduler lock
-- (7301, 0), so holds are read and taken atomically across DAGs; it replaces the per-DAG lock of
-- 000002, and is taken after a run's own lock, never before one.

alter table runner.dags add column exclusive text[] not null default '{}';
alter table runner.dag_runs add column waiting_for text;

create table runner.resource_holds (
  resource text primary key,
  run_pk   bigint not null references runner.dag_runs (id) on delete cascade,
  taken_at timestamptz not null default clock_timestamp()
);
create index resource_holds_by_run on runner.resource_holds (run_pk);

-- True when p_holder is p_run itself or an ancestor of it (through the waiting triggers that created it).
create function runner.is_self_or_ancestor(p_holder bigint, p_run bigint)
returns boolean language sql stable as $$
  with recursive chain (id, parent_ti_id) as (
    select id, parent_ti_id from runner.dag_runs where id = p_run
    union all
    select r.id, r.parent_ti_id
      from chain c join runner.task_instances ti on ti.id = c.parent_ti_id join runner.dag_runs r on r.id = ti.run_pk
  )
  select exists (select 1 from chain where id = p_holder)
$$;

-- Why run p_run cannot take p_resources now ("world held by world_next_day/manual__…"), or null.
create function runner.resource_blocker(p_run bigint, p_resources text[])
returns text language sql stable as $$
  select format('%s held by %s/%s', h.resource, r.dag_id, r.run_id)
    from runner.resource_holds h join runner.dag_runs r on r.id = h.run_pk
   where h.resource = any(p_resources) and not runner.is_self_or_ancestor(h.run_pk, p_run)
   order by h.resource
   limit 1
$$;

create or replace function runner.start_queued_runs(p_dag_id text)
returns void language plpgsql set plan_cache_mode = force_generic_plan as $$
declare
  v_max integer;
  v_paused boolean;
  v_exclusive text[];
  v_active integer;
  v_next bigint;
  v_blocker text;
begin
  perform pg_advisory_xact_lock(7301, 0);
  select max_active_runs, is_paused, exclusive into v_max, v_paused, v_exclusive from runner.dags where dag_id = p_dag_id;
  if not found or v_paused then
    return;
  end if;
  for v_next in select id from runner.dag_runs where dag_id = p_dag_id and state = 'queued' order by id loop
    select count(*) into v_active from runner.dag_runs where dag_id = p_dag_id and state = 'running';
    exit when v_active >= v_max;
    if cardinality(v_exclusive) > 0 then
      v_blocker := runner.resource_blocker(v_next, v_exclusive);
      if v_blocker is not null then
        -- a later run may still start: a child of the holder runs inside its hold
        update runner.dag_runs set waiting_for = v_blocker where id = v_next and waiting_for is distinct from v_blocker;
        continue;
      end if;
      -- a resource an ancestor holds stays the ancestor's
      insert into runner.resource_holds (resource, run_pk)
      select r, v_next from unnest(v_exclusive) as r
      on conflict (resource) do nothing;
    end if;
    update runner.dag_runs set waiting_for = null where id = v_next and waiting_for is not null;
    perform runner.start_run(v_next);
  end loop;
end $$;

create or replace function runner.complete_run(p_run_pk bigint, p_state text)
returns boolean language plpgsql as $$
declare
  v_run runner.dag_runs;
  v_released text[];
  v_dag text;
begin
  perform pg_advisory_xact_lock(7301, 0);
  update runner.dag_runs
     set state = p_state, end_date = clock_timestamp(), waiting_for = null
   where id = p_run_pk and state not in ('success', 'failed')
  returning * into v_run;
  if not found then
    return false;
  end if;
  perform pg_notify('runner_run_done',
    json_build_object('dag_id', v_run.dag_id, 'run_id', v_run.run_id, 'state', v_run.state)::text);
  if v_run.parent_ti_id is not null then
    -- wake the waiting trigger that created this run; it holds no worker while it waits
    perform graphile_worker.add_job('runner_resume',
      json_build_object('ti', v_run.parent_ti_id, 'child', v_run.id, 'dag', v_run.parent_dag_id,
                        'task', v_run.parent_task_id,
                        'try', (select try_number from runner.task_instances where id = v_run.parent_ti_id)),
      max_attempts => 5);
  end if;
  with released as (
    delete from runner.resource_holds where run_pk = v_run.id returning resource
  )
  select array_agg(resource) into v_released from released;
  perform runner.start_queued_runs(v_run.dag_id);
  if v_released is not null then
    -- the DAGs that wait for what was released, oldest waiting run first
    for v_dag in
      select q.dag_id from runner.dag_runs q join runner.dags d on d.dag_id = q.dag_id
       where q.state = 'queued' and d.exclusive && v_released
       group by q.dag_id order by min(q.id)
    loop
      perform runner.start_queued_runs(v_dag);
    end loop;
  end if;
  return true;
end $$;
