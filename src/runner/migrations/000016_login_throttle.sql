-- Wrong passwords counted per user name and per client address (src/api/login-throttle.ts, the
-- rate-limiter-flexible library's Postgres store): one table shared by every runner on this
-- database, so a pool counts the same guesses. Its shape is the library's own (key, points,
-- expire in epoch milliseconds). Runners before this migration made the table themselves at start,
-- hence `if not exists`. It is a migration so the table is there before any runner's first login:
-- the library's own create-at-start raced between runners and failed on a database whose `runner`
-- schema did not exist yet.
create table if not exists runner.login_throttle (
  key    varchar(255) primary key,
  points integer not null default 0,
  expire bigint
);
