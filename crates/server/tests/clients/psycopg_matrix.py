"""The client matrix for psycopg 3 (and psycopg2 with --psycopg2): every
check prints one line, and tests/client_matrix.rs compares the whole
transcript with the one PostgreSQL 15 gives for the same calls.

    python psycopg_matrix.py [--psycopg2] PORT
"""

import datetime
import decimal
import sys
import uuid

PORT = int(next(a for a in sys.argv[1:] if a.isdigit()))
PG2 = "--psycopg2" in sys.argv[1:]

if PG2:
    import psycopg2 as driver
    import psycopg2.extras
else:
    import psycopg as driver
    from psycopg.types.json import Json, Jsonb

conn = driver.connect(host="127.0.0.1", port=PORT, user="postgres", dbname="postgres",
                      connect_timeout=10)


def sqlstate(e):
    return e.pgcode if PG2 else e.sqlstate


def plain(v):
    """psycopg2 returns bytea as memoryview, whose repr is an address."""
    if isinstance(v, memoryview):
        return bytes(v)
    if isinstance(v, (list, tuple)):
        return type(v)(plain(x) for x in v)
    return v


def line(label, value):
    print(f"{label}: {plain(value)!r}", flush=True)


def check(label, fn):
    try:
        line(label, fn())
    except driver.Error as e:
        diag = e.diag
        print(f"{label}: ERROR {sqlstate(e)} {diag.message_primary} | "
              f"schema={diag.schema_name} table={diag.table_name} column={diag.column_name} "
              f"constraint={diag.constraint_name} hint={diag.message_hint}", flush=True)
        conn.rollback()


def one(sql, params=None, binary=False):
    if PG2:
        with conn.cursor() as cur:
            cur.execute(sql, params)
            return cur.fetchone()
    with conn.cursor(binary=binary) as cur:
        cur.execute(sql, params)
        return cur.fetchone()


def run(sql, params=None):
    with conn.cursor() as cur:
        cur.execute(sql, params)


# A session zone that is not UTC: timestamptz results come back in it.
run("set timezone = 'Europe/Paris'")
conn.commit()

LITERALS = [
    "1::int2", "2::int4", "3::int8", "1.5::float4", "2.25::float8", "'NaN'::float8",
    "1.50::numeric", "'-12345678901234567890.123'::numeric", "true", "'x'::text",
    "'ab'::varchar(3)", "'b'::char(3)", "'\\x0001ff'::bytea", "''::bytea",
    "'{\"a\": 1}'::json", "'{\"b\": [1, 2.50, null], \"a\": \"x\"}'::jsonb",
    "'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'::uuid",
    "'1 year 2 mons 3 days 04:05:06.5'::interval", "'-1 day 00:00:01'::interval",
    "'2024-02-29'::date", "'2024-02-29 12:34:56.789'::timestamp",
    "'2024-03-31 02:30:00+00'::timestamptz", "'infinity'::timestamp", "NULL::int",
    "'{1,2,3}'::int4[]", "'{\"a b\",NULL,c}'::text[]",
]
for binary in ([False] if PG2 else [False, True]):
    mode = "binary" if binary else "text"
    for lit in LITERALS:
        check(f"{mode} select {lit}", lambda: one(f"select {lit}", binary=binary))

PARAMS = [
    ("int", 42), ("bigint", 2**40), ("float", 0.1), ("numeric", decimal.Decimal("3.14159")),
    ("bool", False), ("text", "héllo 'quoted' \\ back"), ("bytes", b"\x00\x01\xfe"),
    ("date", datetime.date(2000, 1, 1)),
    ("timestamp", datetime.datetime(2024, 1, 2, 3, 4, 5, 600000)),
    ("timestamptz", datetime.datetime(2024, 7, 1, 12, 0, tzinfo=datetime.timezone.utc)),
    ("interval", datetime.timedelta(days=3, seconds=7, microseconds=5)),
    ("uuid", uuid.UUID("12345678-1234-5678-1234-567812345678")),
    ("none", None),
]
for binary in ([False] if PG2 else [False, True]):
    mode = "binary" if binary else "text"
    for name, value in PARAMS:
        if PG2 and name == "uuid":
            psycopg2.extras.register_uuid()
        check(f"{mode} param {name}", lambda: one("select %s", (value,), binary=binary))
    if not PG2:
        check(f"{mode} param jsonb", lambda: one("select %s", (Jsonb({"k": [1, "v"]}),),
                                                 binary=binary))
        check(f"{mode} param json", lambda: one("select %s", (Json([1, {"a": None}]),),
                                                binary=binary))
conn.commit()

# A table with the types, written with parameters and read back.
run("drop table if exists matrix_t")
run("create table matrix_t (id serial primary key, i int not null, n numeric(8,2), "
    "t text unique, b bytea, j jsonb, u uuid, iv interval, ts timestamptz)")
rows = [(1, decimal.Decimal("1.25"), "one", b"\x01", '{"x": 1}',
         "00000000-0000-0000-0000-000000000001", "1 day", "2024-01-01 00:00:00+01"),
        (2, None, "two", None, None, None, None, None)]
with conn.cursor() as cur:
    cur.executemany("insert into matrix_t (i, n, t, b, j, u, iv, ts) "
                    "values (%s, %s, %s, %s, %s, %s, %s, %s)", rows)
conn.commit()
def fetch_all(sql):
    with conn.cursor() as cur:
        cur.execute(sql)
        return cur.fetchall()


def description(sql):
    with conn.cursor() as cur:
        cur.execute(sql)
        return [(d[0], d[1]) for d in cur.description]


check("table rows", lambda: fetch_all("select * from matrix_t order by id"))
check("description", lambda: description("select * from matrix_t"))


# Constraint errors carry the schema, table, column and constraint fields.
check("unique violation", lambda: run("insert into matrix_t (i, t) values (3, 'one')"))
check("not null violation", lambda: run("insert into matrix_t (i) values (null)"))
check("division by zero", lambda: one("select 1/0"))
check("undefined column", lambda: one("select nosuch from matrix_t"))
check("undefined table", lambda: one("select * from nosuch_table"))
conn.rollback()

# Savepoints through the drivers' nested transactions.
if not PG2:
    conn.autocommit = True
    with conn.transaction():
        run("insert into matrix_t (i, t) values (10, 'ten')")
        try:
            with conn.transaction():
                run("insert into matrix_t (i, t) values (11, 'ten')")
        except driver.errors.UniqueViolation:
            pass
    conn.autocommit = False
    check("after nested transaction", lambda: fetch_all("select i from matrix_t order by i"))

    # Server-side cursors, fetched in batches.
    with conn.cursor(name="matrix_cursor") as cur:
        cur.itersize = 3
        cur.execute("select g, g * 2 from generate_series(1, 10) g")
        check("named cursor", lambda: list(cur))
    conn.rollback()

    # Auto-prepared statements survive a rollback (DEALLOCATE ALL after it).
    conn.prepare_threshold = 0
    for k in range(3):
        check(f"prepared {k}", lambda: one("select %s::int + 1", (k,)))
    conn.rollback()
    check("prepared after rollback", lambda: one("select %s::int + 1", (41,)))
    conn.rollback()
    conn.prepare_threshold = 5
else:
    with conn.cursor(name="matrix_cursor") as cur:
        cur.itersize = 3
        cur.execute("select g, g * 2 from generate_series(1, 10) g")
        check("named cursor", lambda: list(cur))
    conn.rollback()

# A multi-statement query is one transaction.
conn.autocommit = True
check("multi-statement atomic",
      lambda: run("insert into matrix_t (i, t) values (20, 'twenty'); select nosuch"))
check("after failed multi-statement",
      lambda: one("select count(*) from matrix_t where i = 20"))
run("drop table matrix_t")
print("done")
