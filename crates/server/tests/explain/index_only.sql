-- Index-only scans: plan shapes after VACUUM (every page all-visible),
-- Heap Fetches, enable_indexonlyscan.
create table t (k int primary key, v text);
insert into t select g, 'v' || g from generate_series(1, 100000) g;
vacuum analyze t;
select relpages > 0 as has_pages, relallvisible = relpages as all_visible from pg_class where relname = 't';
explain (costs off) select count(*) from t where k between 100 and 2000;
explain (costs off) select k from t where k between 100 and 200;
explain (costs off) select k from t where k between 100 and 200 order by k desc;
explain (costs off) select k from t order by k desc limit 1;
explain (costs off) select k from t order by k limit 5;
explain (costs off) select k from t where k > 99990 and k % 2 = 0;
explain (costs off) select count(*) from t where k in (5, 10, 15);
explain (costs off) select k, v from t where k between 100 and 200;
explain (analyze, costs off, timing off, summary off) select count(*) from t where k between 100 and 2000;
select count(*) from t where k between 100 and 2000;
select k from t order by k desc limit 1;
select k from t where k > 99990 and k % 2 = 0;
set enable_indexonlyscan = off;
explain (costs off) select count(*) from t where k between 100 and 2000;
reset enable_indexonlyscan;
create table u (a int, b int, c int);
insert into u select g % 100, g, g from generate_series(1, 20000) g;
create index u_a_b_idx on u (a, b);
vacuum analyze u;
explain (costs off) select b from u where a = 5;
explain (costs off) select a, b from u where a = 5 and b > 19000;
explain (costs off) select count(*) from u where a = 7;
select count(*), sum(b) from u where a = 7;
-- Not vacuumed yet: every entry's heap page is visited.
create table w (k int primary key);
insert into w select generate_series(1, 1000);
analyze w;
explain (analyze, costs off, timing off, summary off) select k from w where k between 10 and 20;
vacuum w;
explain (analyze, costs off, timing off, summary off) select k from w where k between 10 and 20;
drop table t, u, w;
