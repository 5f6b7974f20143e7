create sequence standalone_seq start 100 increment 5;
select nextval('standalone_seq'), nextval('standalone_seq');
create table typed (
  id serial primary key, b bool, s smallint, i int, big bigint, r real, f double precision,
  n numeric(14,4), n2 numeric, t text, v varchar(30), c char(5), d date, ts timestamp, tz timestamptz);
insert into typed (b, s, i, big, r, f, n, n2, t, v, c, d, ts, tz) values
  (true, 1, 2, 3, 1.5, 2.25, 12.3456, 1e20, 'plain', 'v', 'ab', '2024-02-29', '2024-01-01 12:00', '2024-01-01 12:00+00'),
  (null, null, null, null, null, null, null, null, null, null, null, null, null, null),
  (false, -32768, -2147483648, -9223372036854775808, -0.5, 1e300, -0.0001, 0, e'tab\there, "q" back\\slash\nnewline', 'a,b', 'x', '0001-01-01', '2000-02-29 23:59:59.999999', '1999-12-31 23:59:59+00'),
  (true, 32767, 2147483647, 9223372036854775807, 3.4e38, -1e-300, 9999999999.9999, -123.456, '\N', 'NULL', ' ', '2038-01-19', '1970-01-01', '2038-01-19 03:14:07+00'),
  (false, 0, 0, 0, 0, 0, 0, 0, '', '', '', '2024-01-01', '2024-01-01', '2024-01-01 00:00+00');
insert into typed (i, t) select g, 'row ' || g from generate_series(1, 2000) g;
create table child (id int primary key, typed_id int references typed (id), note text default 'x' not null, unique (note, id), check (id > 0));
insert into child select g, g, 'n' || g from generate_series(1, 100) g;
create table plain_nokey (a int, b text);
insert into plain_nokey values (1, 'one'), (1, 'one'), (null, null);
create index on typed (big);
comment on table typed is 'every type';
