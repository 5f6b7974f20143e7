-- pg_stats after ANALYZE of tables small enough to be sampled whole
-- (compared with PostgreSQL 15 in a C-locale cluster).
CREATE TABLE t (id int, grp int, val int, name text, flag bool, skew int);
INSERT INTO t SELECT i, i % 10, CASE WHEN i % 7 = 0 THEN NULL ELSE (i * 37) % 1000 END,
  'n' || (i % 150), i % 3 = 0, (i % 100) * (i % 3) FROM generate_series(1, 10000) i;
SELECT relname, reltuples, relpages > 0 AS has_pages FROM pg_class WHERE relname = 't';
ANALYZE t;
SELECT relname, reltuples, relpages > 0 AS has_pages FROM pg_class WHERE relname = 't';
SELECT attname, inherited, null_frac, avg_width, n_distinct, most_common_vals,
  most_common_freqs, histogram_bounds, correlation, most_common_elems,
  most_common_elem_freqs, elem_count_histogram
  FROM pg_stats WHERE tablename = 't' ORDER BY attname;
CREATE TABLE u (k int, note text);
INSERT INTO u SELECT i % 40, CASE WHEN i % 5 = 0 THEN 'with space ' || i WHEN i % 5 = 1 THEN '' ELSE 'x' END
  FROM generate_series(1, 300) i;
ANALYZE u (k);
SELECT attname, null_frac, avg_width, n_distinct, most_common_vals, most_common_freqs, histogram_bounds, correlation
  FROM pg_stats WHERE tablename = 'u' ORDER BY attname;
VACUUM ANALYZE u;
SELECT attname, null_frac, avg_width, n_distinct, most_common_vals, most_common_freqs, histogram_bounds, correlation
  FROM pg_stats WHERE tablename = 'u' ORDER BY attname;
ANALYZE u (nosuch);
ANALYZE nosuch;
