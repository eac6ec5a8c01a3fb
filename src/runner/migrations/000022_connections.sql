-- Airflow's connections: how a task reaches a system (type, host, port, login, password, schema and
-- extra JSON), kept by id. These are the ones people create through the API; the stand's own
-- services are listed beside them by the API, read-only, and never stored here. Passwords are kept
-- as given (Airflow encrypts them with its Fernet key when one is set; this runner has none), so the
-- API masks them in every read and in the event log.
create table runner.connections (
  -- Airflow's integer id: the list's default order (creation order)
  id            bigserial primary key,
  connection_id text not null unique
                check (connection_id ~ '^[A-Za-z0-9_.-]{1,200}$'),
  conn_type     text not null,
  description   text,
  host          text,
  login         text,
  schema        text,
  port          integer check (port between 0 and 65535),
  password      text,
  -- a JSON object's text, as Airflow keeps it
  extra         text,
  created_at    timestamptz not null default clock_timestamp(),
  updated_at    timestamptz not null default clock_timestamp()
);

-- Airflow's connection_test (POST /api/v2/connections/enqueue-test, polled by its token). This
-- runner runs a test at once, in the process that took the call, so a row is running only while
-- that call is open; its connection's fields are never kept, only the outcome.
create table runner.connection_tests (
  token          text primary key,
  connection_id  text not null,
  state          text not null check (state in ('pending', 'queued', 'running', 'success', 'failed')),
  result_message text,
  created_at     timestamptz not null default clock_timestamp()
);
-- one open test per connection, as Airflow's 409 "an active connection test already exists"
create unique index connection_tests_one_active on runner.connection_tests (connection_id)
  where state not in ('success', 'failed');
create index connection_tests_by_created on runner.connection_tests (created_at);
