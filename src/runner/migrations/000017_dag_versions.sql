-- DAG versions (Airflow 3's DagVersion, SerializedDagModel and DagCode in one model), import errors
-- kept in Postgres, and reparse requests. The DAG processor (src/dag-processor) parses the folder;
-- one runner of a pool does it (the holder of advisory lock 7302), and every runner reads what it
-- wrote here, so two runners never disagree about a DAG's version.
--
-- A version is made per change of a DAG's structure (its serialized form: tasks, edges, retries,
-- timeouts, schedule, params) or of its code (the hash of the file's bundle: the file with the
-- dags/ modules it imports). A run records the version it was created from (dag_runs.dag_version_id,
-- set by create_run from the DAG's latest version) and runs that version's code and graph to its
-- end: every runner can import a version's bundle from dag_code, whatever the folder holds now.

create table runner.dag_code (
  code_hash  text primary key,
  fileloc    text not null,
  -- the DAG file as written (the Code view); bundle: what runners import (src/, tasks/ and packages
  -- stay imports, resolved against the importing runner's own checkout)
  source     text not null,
  bundle     text not null,
  created_at timestamptz not null default now()
);

create table runner.dag_versions (
  id             uuid primary key default gen_random_uuid(),
  dag_id         text not null references runner.dags (dag_id),
  version_number integer not null check (version_number >= 1),
  -- null for a DAG given to the engine in code (tests), not parsed from a file
  code_hash      text references runner.dag_code (code_hash),
  structure      jsonb not null,
  structure_hash text not null,
  fileloc        text not null,
  created_at     timestamptz not null default clock_timestamp(),
  unique (dag_id, version_number)
);

alter table runner.dags
  add column latest_version_id uuid references runner.dag_versions (id),
  -- its file is gone, or no longer declares it: history kept, not scheduled, not triggerable
  add column is_stale boolean not null default false,
  add column last_parsed_time timestamptz,
  add column last_parse_duration double precision;

alter table runner.dag_runs add column dag_version_id uuid references runner.dag_versions (id);
create index dag_runs_by_version on runner.dag_runs (dag_version_id);

-- Every way a run is created (a trigger, the scheduler, a waiting trigger's child) goes through an
-- insert: the run takes its DAG's latest version unless the caller named one.
create function runner.dag_run_version() returns trigger language plpgsql as $$
begin
  if new.dag_version_id is null then
    select d.latest_version_id into new.dag_version_id from runner.dags d where d.dag_id = new.dag_id;
  end if;
  return new;
end $$;
create trigger dag_runs_version before insert on runner.dag_runs
  for each row execute function runner.dag_run_version();

-- One row per DAG file that does not load (Airflow's ImportError); its id stays while the file
-- stays broken, and the row goes when the file loads again or is removed.
create table runner.import_errors (
  id          bigserial primary key,
  filename    text not null unique,
  bundle_name text not null default 'dags-folder',
  stack_trace text not null,
  timestamp   timestamptz not null default clock_timestamp()
);

-- PUT /api/v2/parseDagFile/{file_token}: any runner records the request, the parsing runner takes it.
create table runner.dag_parse_requests (
  fileloc      text primary key,
  requested_at timestamptz not null default clock_timestamp(),
  requested_by text not null
);
