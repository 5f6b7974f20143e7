-- json/jsonb workload (docs/benchmarks.md): psql -v n=1000000 -f bench/json_docs.sql, against Scalegres and PostgreSQL 15.
\timing on
drop table if exists bench_docs;
create table bench_docs(id int, doc jsonb);
insert into bench_docs select i, ('{"id": ' || i || ', "name": "user' || i || '", "group": "g' || (i % 100) || '", "score": ' || (i % 1000) || '.5, "tags": ["alpha", "beta", "gamma"], "address": {"street": "' || repeat('x', 180) || '", "city": "city' || (i % 50) || '", "zip": "' || (10000 + i % 90000) || '"}, "notes": "' || repeat('n', 180) || '"}')::jsonb from generate_series(1, :n) as g(i);
select count(*) from bench_docs where doc ->> 'group' = 'g42';
select count(*) from bench_docs where doc ->> 'group' = 'g42';
select length(jsonb_agg(doc)::text) from bench_docs where doc ->> 'group' = 'g42';
select jsonb_array_length(jsonb_agg(doc -> 'score')) from bench_docs;
select avg(length(doc::text)) from bench_docs;
