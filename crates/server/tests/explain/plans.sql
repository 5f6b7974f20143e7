-- EXPLAIN output checked against PostgreSQL 15 (plans.out is what
-- PostgreSQL 15 prints for this file through `psql -X -a -q`, with
-- autovacuum off so that no table has statistics). Merge joins, which we
-- do not have, are disabled so that both systems choose among the same
-- methods; every table stays under 10 pages, where both estimate from
-- PostgreSQL's 10-page rule.
set enable_mergejoin = off;
set max_parallel_workers_per_gather = 0;
create table fact (id int, d1 int, d2 int, d3 int, amount int);
create table dim1 (id int, name text);
create table dim2 (id int, kind int);
create table dim3 (id int, region int, code int);
create table pair (a int, b int);
insert into fact select g, g % 10, g % 20, g % 5, g from generate_series(1, 200) g;
insert into dim1 select g, 'n' || g from generate_series(0, 9) g;
insert into dim2 select g, g % 3 from generate_series(0, 19) g;
insert into dim3 select g, g % 2, g from generate_series(0, 4) g;
insert into pair select g, g % 7 from generate_series(1, 50) g;
-- Scans and quals: cheaper quals first, IN lists as = ANY.
explain (costs off) select * from fact;
explain (costs off) select * from fact where amount > 10;
explain (costs off) select * from fact where d1 in (1, 2, 3) and amount between 5 and 50;
explain (costs off) select * from pair where a = 1 or b is null;
explain (costs off) select * from dim1 where name like 'n1%';
explain (costs off) select * from pair where not (a < b);
-- Costs and row estimates.
explain select * from fact;
explain select * from fact where d1 = 5;
explain select * from fact where amount > 10 and amount < 100;
explain select * from pair where a in (1, 2, 3);
-- Joins written in WHERE are joins.
explain (costs off) select * from fact, dim1 where fact.d1 = dim1.id;
explain (costs off) select * from fact f, dim1 d where f.d1 = d.id and d.name = 'n3';
explain (costs off) select f.id from fact f join dim2 d2 on f.d2 = d2.id join dim3 d3 on f.d3 = d3.id where d3.region = 1;
-- A star query written in the worst order.
explain (costs off) select count(*) from dim3, dim2, dim1, fact where fact.d3 = dim3.id and fact.d2 = dim2.id and fact.d1 = dim1.id and dim3.code = 2 and dim2.kind = 1;
select count(*) from dim3, dim2, dim1, fact where fact.d3 = dim3.id and fact.d2 = dim2.id and fact.d1 = dim1.id and dim3.code = 2 and dim2.kind = 1;
-- Outer joins keep their order.
explain (costs off) select * from dim1 left join fact on fact.d1 = dim1.id;
explain (costs off) select * from pair p1 full join pair p2 on p1.a = p2.b;
-- No equality: a nested loop.
explain (costs off) select * from pair p1, pair p2 where p1.a < p2.b;
explain (costs off) select * from dim1, dim3;
set enable_hashjoin = off;
explain (costs off) select * from fact, dim1 where fact.d1 = dim1.id;
reset enable_hashjoin;
-- Aggregates, sorts, limits.
explain (costs off) select count(*) from fact;
explain (costs off) select d1, sum(amount) from fact group by d1;
explain (costs off) select d1, count(*) from fact where amount > 3 group by d1 order by d1 desc limit 3;
explain (costs off) select distinct d2 from fact;
explain (costs off) select * from pair order by b, a desc;
explain (costs off) select * from pair order by a nulls first limit 5 offset 2;
-- Functions and set operations.
explain (costs off) select * from generate_series(1, 10);
explain (costs off) select 1 + 1;
explain (costs off) select a from pair union all select b from pair;
-- EXPLAIN ANALYZE: actual rows and loops.
explain (analyze, costs off, timing off, summary off) select * from fact where amount <= 20;
-- (A hash join's EXPLAIN ANALYZE also prints PostgreSQL's hash table
-- figures, Buckets and Memory Usage, which ours does not have.)
explain (analyze, costs off, timing off, summary off) select count(*) from dim1, dim3 where dim1.id < dim3.id;
explain (analyze, costs off, timing off, summary off) select * from dim1 where id > 100;
-- Errors.
explain (nonsense) select 1;
explain (format yaml_) select 1;
explain (timing) select 1;
