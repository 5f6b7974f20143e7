-- array workload (docs/benchmarks.md): psql -v n=1000000 -f bench/arrays.sql, against Scalegres and PostgreSQL 15.
\timing on
drop table if exists bench_arr;
create table bench_arr(id int, grp int, tags text[]);
insert into bench_arr select i, i % 1000, ARRAY['t' || (i % 10), 'u' || (i % 7), 'v' || (i % 3)] from generate_series(1, :n) as g(i);
select cardinality(array_agg(id)) from bench_arr;
select cardinality(array_agg(id)) from bench_arr;
select count(*), sum(cardinality(a)) from (select grp, array_agg(id) as a from bench_arr group by grp) s;
select count(*), sum(x) from unnest((select array_agg(id) from bench_arr)) as u(x);
select count(*), sum(x) from unnest((select array_agg(id) from bench_arr)) as u(x);
select count(*) from bench_arr where tags @> '{t3}';
select count(*) from bench_arr where 'u4' = any(tags);
