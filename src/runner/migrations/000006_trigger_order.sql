-- One trigger order: the insert sequence of runner.dag_runs.id.
-- create_run now takes the scheduler lock (7301, 0) before it inserts, so ids are allocated in the
-- order their transactions commit. Before this, two triggers in the same millisecond could insert
-- ids 5 and 6, commit 6 first and start it while 5 was invisible: the scheduler (order by id), the
-- listing (order by id) and queued_at then disagreed. Under the lock queued_at (clock_timestamp()
-- at insert) also follows id. 000007 makes every start decision and run end take the same lock.

create or replace function runner.create_run(
  p_dag_id text, p_run_id text, p_run_type text, p_triggered_by text, p_conf jsonb,
  p_logical_date timestamptz, p_note text, p_tasks jsonb, p_parent_ti_id bigint)
returns bigint language plpgsql set plan_cache_mode = force_generic_plan as $$
declare
  v_run_pk bigint;
  v_parent_dag text;
  v_parent_run text;
  v_parent_task text;
begin
  perform pg_advisory_xact_lock(7301, 0);
  if p_parent_ti_id is not null then
    select r.dag_id, r.run_id, ti.task_id into v_parent_dag, v_parent_run, v_parent_task
      from runner.task_instances ti join runner.dag_runs r on r.id = ti.run_pk
     where ti.id = p_parent_ti_id;
  end if;
  insert into runner.dag_runs (dag_id, run_id, state, run_type, triggered_by, conf, logical_date, note,
                               manifest, parent_dag_id, parent_run_id, parent_task_id, parent_ti_id)
  values (p_dag_id, p_run_id, 'queued', p_run_type, p_triggered_by, p_conf, p_logical_date, p_note,
          array(select t ->> 'task_id' from jsonb_array_elements(p_tasks) as t),
          v_parent_dag, v_parent_run, v_parent_task, p_parent_ti_id)
  returning id into v_run_pk;

  insert into runner.task_instances (run_pk, task_id, upstream, downstream, pending_upstream, state, max_tries)
  select v_run_pk, t ->> 'task_id',
         array(select jsonb_array_elements_text(t -> 'upstream')),
         array(select jsonb_array_elements_text(t -> 'downstream')),
         jsonb_array_length(t -> 'upstream'), 'scheduled', (t ->> 'max_tries')::integer
    from jsonb_array_elements(p_tasks) as t;
  update runner.task_instances ti
     set downstream_ids = array(select d.id from runner.task_instances d
                                 where d.run_pk = v_run_pk and d.task_id = any(ti.downstream) order by d.id)
   where ti.run_pk = v_run_pk and cardinality(ti.downstream) > 0;

  perform runner.start_queued_runs(p_dag_id);
  return v_run_pk;
end $$;
