-- Parallel plans and their estimates (PostgreSQL 15's cost model).
create table pt(c1 int, c2 char(1000));
insert into pt select g, 'aaaaa' from generate_series(1, 100000) g;
analyze pt;
-- Too small for the Gather's setup cost.
explain (costs off) select count(*) from pt;
explain select * from pt where c1 % 10 = 3;
set parallel_setup_cost = 0;
explain (costs off) select count(*) from pt;
explain (costs off) select count(*), sum(c1), avg(c1), min(c1), max(c1) from pt where c1 % 10 = 3;
explain select * from pt where c1 % 10 = 3;
explain select * from pt where c1 % 10 = 3 limit 5;
set max_parallel_workers_per_gather = 4;
explain select * from pt where c1 % 10 = 3;
set parallel_leader_participation = off;
explain select * from pt where c1 % 10 = 3;
reset parallel_leader_participation;
set min_parallel_table_scan_size = '200MB';
explain select * from pt where c1 % 10 = 3;
reset min_parallel_table_scan_size;
-- Not below a LIMIT that reads a few rows once setting up costs again.
set parallel_setup_cost = 1000;
explain select * from pt where c1 % 10 = 3 limit 5;
set max_parallel_workers_per_gather = 0;
explain (costs off) select count(*) from pt;
-- Gather Merge: each participant sorts its share.
set max_parallel_workers_per_gather = 2;
set parallel_setup_cost = 0;
explain select * from pt where c1 % 10 = 3 order by c1;
explain select * from pt where c1 % 10 = 3 order by c1 desc, c2;
explain (costs off) select * from pt where c1 % 10 = 3 order by c1 limit 5;
-- A sort under a LIMIT keeps only the rows it reads (a bounded heap).
reset parallel_setup_cost;
explain select * from pt order by c1 limit 10;
explain select * from pt order by c1 desc limit 10 offset 5;
explain select * from pt where c1 % 10 = 3 order by c1 limit 10;
