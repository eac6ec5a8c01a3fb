-- A run moved onto its DAG's latest version (Airflow 3's clear with run_on_latest_version), and
-- Airflow's `removed` task state.
--
-- A run keeps the version it was made from to its end (000017). An operator who fixed a DAG and
-- wants an ended run to go on with the fixed graph clears it with run_on_latest_version: the run is
-- rebound to the latest version first, then the clear runs on that version's graph:
--   * a task the new version no longer has ends `removed` (its tries stay in its history, its edges
--     go: nothing waits on it and it waits on nothing);
--   * a task the new version adds gets a task instance, scheduled, and the clear runs it;
--   * a `removed` task that the new version has again is scheduled again (its tries go on counting);
--   * every kept task takes the new version's edges, and the run its new manifest.
-- Only an ended run is rebound: with a try in flight the graph would change under it.

alter table runner.task_instances drop constraint task_instances_state_check;
alter table runner.task_instances add constraint task_instances_state_check check (state in (
  'scheduled', 'queued', 'running', 'deferred', 'success', 'failed', 'skipped', 'upstream_failed',
  'up_for_retry', 'removed'));

drop index runner.task_instances_unfinished;
create index task_instances_unfinished on runner.task_instances (run_pk)
  where state not in ('success', 'failed', 'skipped', 'upstream_failed', 'removed');

create function runner.rebind_run_to_latest(p_run_pk bigint, p_by text)
  returns table (from_version integer, to_version integer, removed text[], added text[])
  language plpgsql as $$
declare
  v_run runner.dag_runs;
  v_latest uuid;
  v_structure jsonb;
  v_from integer;
  v_to integer;
  v_removed text[];
  v_added text[];
begin
  perform pg_advisory_xact_lock(p_run_pk);
  perform pg_advisory_xact_lock(7301, 0);
  select * into v_run from runner.dag_runs where id = p_run_pk for update;
  select d.latest_version_id into v_latest from runner.dags d where d.dag_id = v_run.dag_id;
  select v.version_number into v_from from runner.dag_versions v where v.id = v_run.dag_version_id;
  if v_latest is null or v_latest is not distinct from v_run.dag_version_id then
    return query select v_from, v_from, '{}'::text[], '{}'::text[];
    return;
  end if;
  if v_run.state not in ('success', 'failed') then
    raise exception 'run % of DAG % is %: only an ended run moves to the latest version (a try in flight would have its graph changed under it); wait for it to end or mark it, then clear it again',
      v_run.run_id, v_run.dag_id, v_run.state using errcode = '55000';
  end if;
  select v.structure, v.version_number into v_structure, v_to from runner.dag_versions v where v.id = v_latest;

  create temp table rebind_tasks on commit drop as
  select t ->> 'taskId' as task_id,
         array(select jsonb_array_elements_text(t -> 'upstream')) as upstream,
         array(select jsonb_array_elements_text(t -> 'downstream')) as downstream,
         (t ->> 'retries')::integer + 1 as tries,
         ord
    from jsonb_array_elements(v_structure -> 'tasks') with ordinality as x(t, ord);

  with gone as (
    update runner.task_instances ti
       set state = 'removed', upstream = '{}', downstream = '{}', downstream_ids = '{}',
           pending_upstream = 0, upstream_skipped = false, end_date = coalesce(ti.end_date, clock_timestamp()),
           error = format('removed: version %s of DAG %s has no task %s (the run was moved to it by %s; it was %s)',
                          v_to, v_run.dag_id, ti.task_id, p_by, ti.state)
     where ti.run_pk = p_run_pk and ti.state <> 'removed'
       and not exists (select 1 from rebind_tasks t where t.task_id = ti.task_id)
    returning ti.id, ti.task_id, ti.try_number
  ), logged as (
    insert into runner.task_log_lines (ti_id, try_number, at, level, message)
    select g.id, g.try_number, clock_timestamp(), 'warn',
           format('removed by %s: the run moved to version %s of the DAG, which has no task %s', p_by, v_to, g.task_id)
      from gone g where g.try_number > 0
  )
  select coalesce(array_agg(task_id order by task_id), '{}') into v_removed from gone;

  update runner.task_instances ti
     set upstream = t.upstream, downstream = t.downstream,
         state = case when ti.state = 'removed' then 'scheduled' else ti.state end,
         max_tries = case when ti.state = 'removed' then ti.try_number + t.tries else ti.max_tries end,
         end_date = case when ti.state = 'removed' then null else ti.end_date end,
         error = case when ti.state = 'removed' then null else ti.error end
    from rebind_tasks t
   where ti.run_pk = p_run_pk and ti.task_id = t.task_id;

  with fresh as (
    insert into runner.task_instances (run_pk, task_id, upstream, downstream, pending_upstream, state, max_tries)
    select p_run_pk, t.task_id, t.upstream, t.downstream, cardinality(t.upstream), 'scheduled', t.tries
      from rebind_tasks t
     where not exists (select 1 from runner.task_instances ti where ti.run_pk = p_run_pk and ti.task_id = t.task_id)
    returning task_id
  )
  select coalesce(array_agg(task_id order by task_id), '{}') into v_added from fresh;

  update runner.task_instances ti
     set downstream_ids = array(select d.id from runner.task_instances d
                                 where d.run_pk = p_run_pk and d.task_id = any(ti.downstream) order by d.id)
   where ti.run_pk = p_run_pk;

  update runner.dag_runs
     set dag_version_id = v_latest,
         manifest = array(select t.task_id from rebind_tasks t order by t.ord),
         note = coalesce(note || E'\n', '') ||
                format('moved from version %s to %s by %s%s%s', coalesce(v_from::text, 'none'), v_to, p_by,
                       case when cardinality(v_removed) > 0 then format('; removed: %s', array_to_string(v_removed, ', ')) else '' end,
                       case when cardinality(v_added) > 0 then format('; added: %s', array_to_string(v_added, ', ')) else '' end)
   where id = p_run_pk;
  drop table rebind_tasks;
  return query select v_from, v_to, v_removed, v_added;
end $$;

-- The clear of 000012, aware of versions: a `removed` task is never cleared, a task its ended run
-- never ran (scheduled: added by a rebind) always runs, and each task gets the tries of the version
-- its run executes (p_tries, from the runner's current DAG, only for a run from before versions).
create or replace function runner.clear_task_instances(
  p_run_pk bigint, p_task_ids text[], p_only_failed boolean, p_include_downstream boolean,
  p_include_upstream boolean, p_tries jsonb, p_by text, p_dry_run boolean
) returns setof bigint language plpgsql as $$
declare
  v_run runner.dag_runs;
  v_ids bigint[];
  v_ready bigint[];
  v_version_tries jsonb;
begin
  perform pg_advisory_xact_lock(p_run_pk);
  perform pg_advisory_xact_lock(7301, 0);
  select * into v_run from runner.dag_runs where id = p_run_pk;
  select jsonb_object_agg(t ->> 'taskId', (t ->> 'retries')::integer + 1) into v_version_tries
    from runner.dag_versions v, jsonb_array_elements(v.structure -> 'tasks') as t
   where v.id = v_run.dag_version_id;

  with recursive base as (
    select ti.id from runner.task_instances ti
     where ti.run_pk = p_run_pk
       and (p_task_ids is null or ti.task_id = any(p_task_ids))
       and (not p_only_failed or ti.state in ('failed', 'upstream_failed'))
  ), down (id) as (
    select id from base where p_include_downstream
    union
    select d.id from down x join runner.task_instances f on f.id = x.id, unnest(f.downstream_ids) as d(id)
  ), up (id) as (
    select id from base where p_include_upstream
    union
    select u.id from up x join runner.task_instances f on f.id = x.id
      join runner.task_instances u on u.run_pk = f.run_pk and u.task_id = any(f.upstream)
  ), never_started as (
    select ti.id from runner.task_instances ti
     where ti.run_pk = p_run_pk
       and ((v_run.state = 'failed' and ti.try_number = 0 and ti.state in ('skipped', 'upstream_failed'))
            or (v_run.state in ('success', 'failed') and ti.state = 'scheduled'))
  )
  select array_agg(distinct ti.id order by ti.id) into v_ids
    from runner.task_instances ti
   where ti.id in (select id from base union select id from down union select id from up union select id from never_started)
     and ti.state not in ('running', 'deferred', 'removed');

  if v_ids is null or p_dry_run then
    return query select unnest(coalesce(v_ids, '{}'));
    return;
  end if;

  insert into runner.task_log_lines (ti_id, try_number, at, level, message)
  select ti.id, ti.try_number, clock_timestamp(), 'info',
         format('cleared by %s (was %s); the next try is %s', p_by, ti.state, ti.try_number + 1)
    from runner.task_instances ti
   where ti.id = any(v_ids) and ti.try_number > 0;

  update runner.task_instances ti
     set state = 'scheduled', start_date = null, end_date = null, error = null, worker = null,
         lease_expires_at = null, next_retry_at = null, queued_at = null, job_id = null,
         child_dag_id = null, child_run_id = null, child_run_pk = null, upstream_skipped = false,
         max_tries = ti.try_number + coalesce((v_version_tries ->> ti.task_id)::integer, (p_tries ->> ti.task_id)::integer, 1)
   where ti.id = any(v_ids);
  update runner.task_instances ti
     set pending_upstream = (select count(*) from runner.task_instances u
                              where u.run_pk = ti.run_pk and u.task_id = any(ti.upstream)
                                and u.state not in ('success', 'skipped')),
         upstream_skipped = exists (select 1 from runner.task_instances u
                                     where u.run_pk = ti.run_pk and u.task_id = any(ti.upstream) and u.state = 'skipped')
   where ti.id = any(v_ids);

  if v_run.state in ('success', 'failed') then
    update runner.dag_runs
       set state = 'queued', end_date = null, waiting_for = null,
           note = coalesce(note || E'\n', '') || format('cleared by %s: %s task(s) run again', p_by, cardinality(v_ids))
     where id = p_run_pk;
    perform runner.start_queued_runs(v_run.dag_id);
  else
    with ready as (
      update runner.task_instances ti
         set state = 'queued', queued_at = clock_timestamp()
       where ti.id = any(v_ids) and ti.pending_upstream = 0 and not ti.upstream_skipped
      returning ti.id
    )
    select array_agg(id) into v_ready from ready;
    perform runner.enqueue_task_jobs(v_ready);
  end if;
  return query select unnest(v_ids);
end $$;

-- A run settles when every task instance is terminal; `removed` is terminal.
create or replace function runner.settle_run(p_run_pk bigint) returns void language plpgsql as $$
begin
  if exists (select 1 from runner.task_instances
              where run_pk = p_run_pk and state not in ('success', 'failed', 'skipped', 'upstream_failed', 'removed')) then
    return;
  end if;
  if exists (select 1
               from runner.dag_runs r, unnest(r.manifest) as m(task_id)
              where r.id = p_run_pk
                and not exists (select 1 from runner.task_instances ti
                                 where ti.run_pk = r.id and ti.task_id = m.task_id)) then
    raise warning 'runner: run % holds: a manifest task has no task instance', p_run_pk;
    return;
  end if;
  perform runner.complete_run(p_run_pk, 'success');
end $$;
