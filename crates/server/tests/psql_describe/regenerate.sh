#!/bin/sh
# Regenerates the expected outputs from a real PostgreSQL 15 (run as a user
# that may run initdb, e.g. postgres). The cluster is made to hold the same
# objects as a fresh Scalegres cluster: locale C (Scalegres compares strings
# bytewise), no template0 (Scalegres has only template1 and postgres), plus
# setup.sql.
set -eu
bin=/usr/lib/postgresql/15/bin
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap '"$bin/pg_ctl" -D "$work/data" stop -m immediate >/dev/null 2>&1 || true; rm -rf "$work"' EXIT
"$bin/initdb" -D "$work/data" -U postgres --locale=C -E UTF8 >/dev/null 2>&1
"$bin/pg_ctl" -D "$work/data" -o "-p 55431 -k $work -c listen_addresses=''" -l "$work/log" -w start >/dev/null
psql() { "$bin/psql" -X -h "$work" -p 55431 -U postgres -d postgres "$@"; }
psql -q -c "update pg_database set datistemplate = false where datname = 'template0'" \
    -c "drop database template0" -f "$here/setup.sql"
while read -r name command; do
    psql -c "$command" > "$here/$name.out" 2>&1
done < "$here/commands.txt"
