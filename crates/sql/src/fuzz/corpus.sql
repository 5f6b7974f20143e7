-- Seed corpus of the SQL fuzz targets (sql::fuzz, the server's fuzz_memory
-- test): one statement per line, taken from the sqllogictest files in
-- crates/server/tests/sql and extended by hand with constructs they lack.
create table t(a int, b text, c numeric(10,2), d double precision, e boolean, f date, g char(5), h varchar(10))
insert into t values (1, 'one', 1.5, 0.25, true, '2024-01-31', 'ab', 'x'), (2, 'two', -2.25, 1e10, false, '2000-02-29', 'abcde', null), (3, null, null, null, null, null, null, 'z')
select a, b, c, d, e from t
select f + 1, g || '|', length(g) from t where a < 3 order by a
select coalesce(h, 'none') from t order by a
select 7 / 2, 7 % 3, 7.0 / 2
select 'abc' like 'a%', 'ABC' ilike 'a_c'
select case when a > 1 then 'big' else 'small' end from t order by a
select count(*) from t where b is null
select upper('héllo'), substring('database' from 2 for 3)
select round(2.5::numeric) + round(-2.5::numeric)
select a from t where a in (1, 3) order by a desc
select a from t where a between 2 and 3 and not (b is null) order by a
insert into t(h) values ('01234567890')
select 1/0
select lower('AbC'), initcap('hello world'), lpad('7', 3, '0'), rpad('ab', 4, '*')
select replace('banana', 'an', 'AN'), split_part('a,b,c', ',', 2), strpos('hello', 'll')
select btrim('  x  '), ltrim('xxhixx', 'x'), rtrim('xxhixx', 'x')
select left('abcdef', 2), right('abcdef', 2)
select repeat('ab', 3), length('héllo')
select concat('a', 1, null, true)
select abs(-2.5), ceil(1.2), floor(-1.2), trunc(2.789, 1)
select round(2.345, 2), mod(17, 5)
select sqrt(16::float8)
select power(2, 10)
select 1 << 4 | 1
select greatest(3, 7, 5), least(3, 7, 5), nullif(4, 4)
select md5('abc')
select date '2024-03-01' - 1, date '2024-12-31' - date '2024-01-01'
select timestamp '2024-01-02 03:04:05.5'
select extract(year from date '2024-05-06')
select 1.10::numeric(5,2) + 2
select 0.1::float8 + 0.2::float8
select 3000000000::bigint / 2
select 2147483647 + 1
select 'x'::boolean
select nosuchfunction(1)
create table items(id integer not null, name varchar(20), price numeric(8,2), qty smallint default 1, note text, at timestamp with time zone)
select table_schema, table_name, table_type from information_schema.tables where table_schema = 'public'
select column_name, ordinal_position, is_nullable, data_type, character_maximum_length, numeric_precision, numeric_scale from information_schema.columns where table_name = 'items' order by ordinal_position
select column_default from information_schema.columns where table_name = 'items' and column_name = 'qty'
create table l(id int, k int, tag text)
create table r(id int, k int, val text)
insert into l values (1, 10, 'a'), (2, 20, 'b'), (3, null, 'c'), (4, 40, 'd'), (5, 10, 'e')
insert into r values (1, 10, 'x'), (2, 10, 'y'), (3, 30, 'z'), (4, null, 'w'), (5, 40, 'v')
select l.tag, r.val from l join r on l.k = r.k order by 1, 2
select l.tag, r.val from l join r on r.k = l.k and r.id > 1 order by 1, 2
select l.tag, r.val from l left join r on l.k = r.k and r.val <> 'x' order by 1, 2
select l.tag, r.val from l right join r on l.k = r.k order by 2, 1
select l.tag, r.val from l full join r on l.k = r.k order by 1, 2
select count(*) from l join r on l.k + 0 = r.k and l.id < r.id
select l.tag, r.val from l join r using (id) where l.k is null or r.k is null order by 1
select count(*) from l, r where l.k = r.k
create table n(g text, v int)
insert into n values ('a', 1), ('a', null), ('b', 3), (null, 4), (null, null)
select count(*) from n where v = null
select count(*) from n where v is distinct from 1
select count(v), sum(v), min(v), avg(v) from n
select g, count(*), sum(v) from n group by g order by g
select g, v from n order by v desc, g
select g, v from n order by v nulls first, g nulls first
select count(*) from n where v not in (1, null)
select case when null then 'yes' else 'no' end
select coalesce(null, null, 'third')
select sum(v) from n where false
select count(distinct g) from n
select string_agg(g, ',') , bool_and(v > 0) from n
create table pc(id int, v text, n numeric)
insert into pc values (1, 'one', 1.5), (2, 'two', 2.25)
insert into pc values (3, 'six', 3.5), (4, 'xyz', 4.75)
select id, v, n from pc where id between 1 and 2 order by id
select id, v, n from pc where id between 3 and 9 order by id
select trim(both 'x' from 'xaxx'), substring('abcdef' from 2 for 3)
select trim(both 'y' from 'yyby'), substring('uvwxyz' from 4 for 2)
select 7 / 2, 9 - 4
select 7 / 2.0, 9 - 4.0
select 'it''s'
select 'a''bc'
select count(*) from pc where v = 'one'
select count(*) from pc where v = 'no!'
update pc set v = 'ONE' where id = 1
update pc set v = 'TWO' where id = 2
select id, v from pc order by id limit 2 offset 0
select id, v from pc order by id limit 1 offset 3
select 'abc'::int
select '123'::int
select date '2020-01-31' + 1
select date '1999-12-31' + 1
create table emp(id int, name text, dept int, salary int)
create table dept(id int, title text)
insert into emp values (1,'ann',10,100),(2,'bob',10,200),(3,'cid',20,150),(4,'dee',null,50)
insert into dept values (10,'eng'),(20,'ops'),(30,'hr')
select count(*), count(dept), sum(salary), avg(salary) from emp
select d.title, count(e.id), sum(e.salary) from dept d left join emp e on e.dept = d.id group by d.title
select e.name, d.title from emp e join dept d on e.dept = d.id order by e.name
select dept from emp group by dept having sum(salary) > 120 order by dept
select name from emp where salary > (select avg(salary) from emp) order by name
select name from emp e where exists (select 1 from dept d where d.id = e.dept and d.title = 'eng') order by 1
select id from dept where id not in (select dept from emp where dept is not null) order by id
select id from emp union select id from dept order by 1
select dept from emp intersect select id from dept order by 1
select id from dept except select dept from emp order by 1
select name, salary from emp order by salary desc limit 2 offset 1
select distinct dept from emp where dept is not null order by 1
select x, x * x from generate_series(1, 3) x order by x
select max(salary) - min(salary) from emp
create table words(w text)
insert into words values ('apple'), ('Banana'), ('cherry'), (null)
select w from words where w ~ '^[a-c]' order by w
select w from words where w ~* '^b' order by w
select w from words where w !~ 'an' order by w
select w from words where w !~* 'A' order by w
select 'abc' ~ 'b+', null::text ~ 'x'
select 'abc' ~ '('
select 'abc' OPERATOR(pg_catalog.~) 'b', 2 OPERATOR(pg_catalog.+) 3
select '2024-01-01 00:00:00+00'::timestamptz
set timezone = '+02'
select '2024-01-01 00:00:00'::timestamptz, '2024-01-01 10:00'::timestamp::timestamptz
select '2024-01-01 23:30:00+00'::timestamptz::date, '2024-01-01 23:30:00+00'::timestamptz::timestamp
select date_part('hour', '2024-01-01 00:00:00+00'::timestamptz)
set time zone -5
select '2024-06-01 12:00:00+00'::timestamptz
set timezone = '-03:30'
reset timezone
set timezone = 'Mars/Base'
create table acc(id int, v int)
insert into acc values (1, 10)
begin
update acc set v = v + 5
insert into acc values (2, 20)
rollback
select id, v from acc
update acc set v = 11 where id = 1
select 1
commit
select v from acc
delete from acc
select count(*) from acc
select 1 + 2 * 3 - (4 / 2) % 3, -5, +6, 2 ^ 10, |/ 16, @ -3
select case when a > 1 then 'x' when a is null then null else 'y' end from t
select coalesce(null, 1), nullif(1, 1), greatest(1, 2, 3), least('a', 'b')
select cast('12' as int) + '3'::int8, 1.5::numeric(10,2), '2024-01-02'::date + 1
select a, b from t where a in (1, 2, 3) and b not like 'x%' or a between 1 and 9
select exists (select 1 from t where t.a = u.a) from u
select a from t union all select b from u except select 1 intersect select 2
with recursive r(n) as (select 1 union all select n + 1 from r where n < 5) select * from r
select a, count(*) over (partition by b order by a rows between 1 preceding and current row) from t
select $1::int + $2, $3
select E'a\\nb', U&'d\\0061t', 'it''s', $$dollar$$, $tag$x$tag$, B'101', X'1f'
select timestamp '2024-01-02 03:04:05', interval '1 day', date 'epoch'
select array[1, 2][1], (1, 2), row(1, 'a')
insert into t (a, b) values (1, 'a'), (2, default) on conflict do nothing returning *
update t set a = a + 1, b = upper(b) from u where t.a = u.a returning a
delete from t where a = any (select a from u) returning b
create table t2 (id serial primary key, v varchar(10) not null default 'x', n numeric(5,2), ts timestamptz)
alter table t add column c int default 7
create index on t (a)
begin; savepoint s; rollback to s; commit
prepare p(int) as select $1; execute p(1); deallocate p
copy t from stdin
set search_path = public, pg_catalog; show search_path; reset all
explain analyze select * from t order by a desc nulls last limit 10 offset 2
select * from t natural join u left join v using (a) cross join w
select distinct on (a) a, b from t order by a, b fetch first 3 rows only
select a::text || b, length(b), substring(b from 2 for 3), position('x' in b) from t
select count(distinct a) filter (where b > 'a'), string_agg(b, ',' order by b) from t
values (1, 'a'), (2, 'b')
table t
select * from pg_catalog.pg_class c join pg_namespace n on n.oid = c.relnamespace
select * from information_schema.tables where table_schema = 'public'
truncate t; drop table if exists t2 cascade
select 1 /* comment */ -- tail
select "Quoted Col", t."a" from t as "T"
