-- Variables: a key/value store where every change is recorded (old, new, when, who, which run).
-- A per-key advisory lock makes "old value" exact even when two writers race.

create function runner.set_variable(
  p_key text, p_value text, p_description text, p_set_description boolean,
  p_changed_by text, p_dag_id text, p_run_id text)
returns runner.variables language plpgsql as $$
declare
  v_old text;
  v_row runner.variables;
begin
  perform pg_advisory_xact_lock(7302, hashtext(p_key));
  select value into v_old from runner.variables where key = p_key;
  insert into runner.variables as v (key, value, description, updated_at)
  values (p_key, p_value, case when p_set_description then p_description end, clock_timestamp())
  on conflict (key) do update
     set value = excluded.value,
         description = case when p_set_description then p_description else v.description end,
         updated_at = excluded.updated_at
  returning * into v_row;
  insert into runner.variable_history (key, old_value, new_value, changed_by, dag_id, run_id)
  values (p_key, v_old, p_value, p_changed_by, p_dag_id, p_run_id);
  return v_row;
end $$;

-- Returns false when there was nothing to delete (nothing is recorded then).
create function runner.delete_variable(p_key text, p_changed_by text, p_dag_id text, p_run_id text)
returns boolean language plpgsql as $$
declare
  v_old text;
begin
  perform pg_advisory_xact_lock(7302, hashtext(p_key));
  delete from runner.variables where key = p_key returning value into v_old;
  if not found then
    return false;
  end if;
  insert into runner.variable_history (key, old_value, new_value, changed_by, dag_id, run_id)
  values (p_key, v_old, null, p_changed_by, p_dag_id, p_run_id);
  return true;
end $$;

-- A task writes variables only while its try still holds the task: the FOR SHARE lock keeps the
-- reaper from taking the try over until the write commits, and a try already taken over is
-- refused (SQLSTATE RNLST), so a zombie worker cannot change what its successor relies on.
create function runner.assert_try_holds(p_ti_id bigint, p_token uuid)
returns void language plpgsql as $$
begin
  perform 1 from runner.task_instances
   where id = p_ti_id and attempt_token = p_token and state = 'running'
     for share;
  if not found then
    raise exception 'try % of task instance % no longer holds the task', p_token, p_ti_id using errcode = 'RNLST';
  end if;
end $$;
