-- EXPLAIN (FORMAT JSON) checked against PostgreSQL 15 (json.out is what
-- PostgreSQL 15 prints for this file through `psql -X -a -q`, autovacuum
-- off). Costs are left out where estimates differ in the last digit;
-- ANALYZE runs with TIMING OFF and SUMMARY OFF so that no figure varies.
set enable_mergejoin = off;
set max_parallel_workers_per_gather = 0;
create table fact (id int, d1 int, amount int);
create table dim1 (id int, name text);
insert into fact select g, g % 10, g from generate_series(1, 200) g;
insert into dim1 select g, 'n' || g from generate_series(0, 9) g;
explain (format json) select * from fact;
explain (format json, costs off) select * from fact where amount > 10;
explain (format json, costs off) select f.id, d.name from fact f join dim1 d on f.d1 = d.id where d.name <> 'n3';
explain (format json, costs off) select f.id, d.name from fact f left join dim1 d on f.d1 = d.id;
explain (format json, costs off) select d1, count(*) from fact group by d1 order by d1;
explain (format json, costs off) select count(*) from fact;
explain (format json, costs off) select * from fact order by amount desc limit 5;
explain (format json, costs off) select 1;
explain (format json, costs off) select * from generate_series(1, 3);
explain (format json, analyze, costs off, timing off, summary off) select count(*) from fact where amount > 150;
explain (format json, analyze, costs off, timing off, summary off) select * from fact where amount > 1000;
explain (format json, costs off) insert into fact values (1, 2, 3);
explain (format json, costs off) delete from fact where id = 3;
