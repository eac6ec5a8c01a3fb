-- Airflow's jobs (GET /api/v2/jobs): each runner process's heartbeat row is one job. A number to
-- name it by (Airflow's job id), and the moment a runner stopped cleanly: a row that stopped
-- beating without one was killed (kill -9, a lost machine), which the jobs list says as failed.
alter table runner.heartbeats add column id bigserial;
alter table runner.heartbeats add column stopped_at timestamptz;
create unique index heartbeats_by_id on runner.heartbeats (id);
