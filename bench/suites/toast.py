"""Suite `toast`: large values (issue 15) beside PostgreSQL 15.

Rows of 10 KB text and of 1 MB bytea, inserted with INSERT ... SELECT and
read back whole, with each server's default compression (PostgreSQL's pglz,
Scalegres' lz4) and then with lz4 on both (`default_toast_compression`):

    create table toast_text (id int, body text);
    insert into toast_text select g, <10 KB of text> from generate_series(1, N) g;
    select sum(strpos(body, '#')) from toast_text;               -- read back
    create table toast_blob (id int, body bytea);
    insert into toast_blob select g, <1 MB> from generate_series(1, M) g;
    select sum(position('\\x00010203'::bytea in body)) from toast_blob;

The text is a row-specific md5 repeated (compresses well, as documents
do); the bytea is half a repeated block and half bytes that do not repeat,
so compression pays a little. Reading back searches every byte (`length()`
alone would read only a TOAST pointer on PostgreSQL). Median of the runs;
the tables are dropped and made again for each insert.
"""

import time

NAME = "toast"


def text_rows(quick):
    return 20_000 if quick else 100_000


def blob_rows(quick):
    return 100 if quick else 1_000


def repeats(quick):
    return 3


def describe(quick):
    return (f"{text_rows(quick):,} rows of 10 KB text and {blob_rows(quick):,} rows of 1 MB "
            f"bytea inserted and read back; default compression, then lz4 on both; "
            f"median of {repeats(quick)} runs")


def measurements(quick):
    out = []
    for mode in ("default", "lz4"):
        out += [
            (f"text_insert_{mode}", f"insert 10 KB text rows ({mode})", f"text_insert_{mode}_ratio"),
            (f"text_read_{mode}", f"read them back ({mode})", f"text_read_{mode}_ratio"),
            (f"blob_insert_{mode}", f"insert 1 MB bytea rows ({mode})", f"blob_insert_{mode}_ratio"),
            (f"blob_read_{mode}", f"read them back ({mode})", f"blob_read_{mode}_ratio"),
        ]
    return out


def run(server, quick, log):
    n, m = text_rows(quick), blob_rows(quick)
    text = "repeat(md5(g::text), 320)"
    # 512 KB of one repeated block, then 512 KB of per-row hashes.
    blob = ("decode(repeat(md5(g::text), 16384) || "
            "(select string_agg(md5((g * 100000 + i)::text), '') "
            "from generate_series(1, 16384) i), 'hex')")
    results = {}
    for mode in ("default", "lz4"):
        if mode == "lz4":
            # Every later session: ALTER SYSTEM and a reload, on both servers.
            server.psql("alter system set default_toast_compression = lz4;\n"
                        "select pg_reload_conf();")
            time.sleep(1)
        for kind, rows, expr, ty in (("text", n, text, "text"), ("blob", m, blob, "bytea")):
            table = f"toast_{kind}"
            inserts = []
            for _ in range(repeats(quick)):
                server.psql(f"drop table if exists {table}; create table {table} (id int, body {ty});")
                inserts += server.time_sql(
                    f"insert into {table} select g, {expr} from generate_series(1, {rows}) g")
            log(f"{server.label}: {kind} insert ({mode}) {sorted(inserts)}")
            results[f"{kind}_insert_{mode}"] = inserts
            # A search through every byte: each value read back whole
            # (length() alone reads only a TOAST pointer on PostgreSQL).
            probe = "strpos(body, '#')" if kind == "text" else \
                "position('\\x00010203'::bytea in body)"
            results[f"{kind}_read_{mode}"] = server.time_sql(
                f"select sum({probe}) from {table}", repeats=repeats(quick), warmup=1)
    server.psql("alter system reset default_toast_compression;\nselect pg_reload_conf();")
    return results
