-- Which bundle (Airflow 3's DAG bundle: one of the runner's DAG folders, src/server/dag-folders.ts)
-- each version and import error comes from: the repository's dags/ is `dags-folder`, the stand's
-- <state_dir>/dags `stand-dags`. Versions made before this migration were all dags-folder's or in code.
alter table runner.dag_versions add column bundle_name text not null default 'dags-folder';
