-- A group of loaders (loader.instances, docs/deploy.md): each member reports its own status row,
-- keyed by what tells it apart on any host: its instance name, host name and HTTP port
-- ("loader@host:28090", "loader-2@host:28091"). A world task waits until every live member has
-- reached what it asked. The single row of before (id = 1) becomes the first instance's; its next
-- heartbeat writes the key it really has.
alter table loader.status add column instance text not null default 'loader';
alter table loader.status drop column id; -- its primary key and its check (id = 1) go with it
alter table loader.status add primary key (instance);
alter table loader.status alter column instance drop default;
