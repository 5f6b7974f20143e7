-- The objects the describe commands are checked on (psql_describe.rs).
create table t(
    id int not null,
    name varchar(20) default 'x',
    price numeric(10,2) not null default 0,
    created timestamptz default now(),
    note text
);
