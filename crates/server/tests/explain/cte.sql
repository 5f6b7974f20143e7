-- WITH queries: inlined, computed apart (CTE Scan with its CTE block),
-- recursive (Recursive Union, WorkTable Scan); text and JSON.
create table t (a int, b text);
explain (costs off) with x as (select a from t) select * from x where a = 2;
explain (costs off) with x as materialized (select a, b from t) select b from x where a = 1;
explain (costs off) with x as materialized (select a from t), y as materialized (select a from x) select * from y;
explain (costs off) with recursive r(n) as (select 1 union all select n + 1 from r where n < 5) select * from r;
explain (costs off) with recursive r(n) as (select 1 union select n + 1 from r where n < 5) select n from r limit 3;
explain (costs off, format json) with x as materialized (select a from t) select * from x where a = 2;
explain (costs off, format json) with recursive r(n) as (select 1 union all select n + 1 from r where n < 5) select * from r;
-- A CTE read twice runs once, in whichever reference is read first.
insert into t values (1, 'x'), (2, 'y'), (3, 'z');
explain (analyze, costs off, timing off, summary off) with x as (select a from t) select * from x union all select * from x;
