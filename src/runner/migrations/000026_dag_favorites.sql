-- Airflow 3's favourite DAGs (its dag_favorite table): each user marks the DAGs they follow
-- (POST /api/v2/dags/{dag_id}/favorite and /unfavorite), and GET /dags filters on is_favorite and
-- says it on each DAG, for that caller. The user is the name the API gives the caller in the event
-- log: a login user's name, else 'api_token (<client>)'. A DAG's favourites go with it: deleted by
-- DELETE /dags/{dag_id} (src/runner/run-delete.ts), and with the DAG's row when a stale DAG goes.
create table runner.dag_favorites (
  dag_id     text not null references runner.dags (dag_id) on delete cascade,
  user_name  text not null,
  created_at timestamptz not null default clock_timestamp(),
  primary key (dag_id, user_name)
);
-- GET /dags reads one user's favourites
create index dag_favorites_by_user on runner.dag_favorites (user_name);
