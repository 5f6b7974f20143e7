-- The objects the describe commands are checked on (psql_describe.rs).
create table t(
    id int not null,
    name varchar(20) default 'x',
    price numeric(10,2) not null default 0,
    created timestamptz default now(),
    note text
);
comment on table t is 'priced things';
comment on column t.id is 'the key';
comment on column t.note is 'free text';
create view tv as select id, name from t where id > 0;
comment on view tv is 'positive ids';
comment on column tv.name is 'the name';
-- No varlena columns: no TOAST table, whose index PostgreSQL counts in \dt+'s Size.
create table nums(n int);
comment on table nums is 'just numbers';
-- Constraints: \d shows the CHECKs, foreign keys and the tables referencing one.
create table cp(id int primary key, k text unique);
create table cc(
    id int check (id > 0),
    p int references cp on delete cascade,
    k text,
    foreign key (k) references cp (k) deferrable,
    check (id < p)
);
