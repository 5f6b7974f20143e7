#!/usr/bin/env bash
# Runs real PostgreSQL 15 behind the `scalegres` command line the integration
# tests use (`-D DIR -p PORT -c name=value ...`), so a test can be checked
# against PostgreSQL itself:
#
#   SCALEGRES_TEST_BIN=$PWD/crates/server/tests/support/postgres_as_scalegres.sh \
#     cargo test -p server --test unique_concurrency -- --include-ignored
#
# What it does so that support/mod.rs sees the same thing as with Scalegres:
# - initdb (trust authentication, UTF8, C locale) when DIR is not a cluster yet;
# - as root, runs PostgreSQL as the `postgres` system user (it refuses root):
#   the test's temporary directory is opened up (0755) and the data and socket
#   directories are handed to that user;
# - forwards SIGINT/SIGTERM/SIGHUP to the postmaster and exits with its status;
# - when this script is SIGKILLed (TestServer::kill, the crash tests), a watcher
#   SIGKILLs the postmaster and every child of it, as a crash of the whole
#   server would (a postmaster killed alone leaves its backends running);
# - on start, waits for a postmaster left by such a kill to be gone.
#
# Settings the tests pass that PostgreSQL does not have make it refuse to
# start; such a test cannot be checked this way.
set -euo pipefail

PG_BIN=${PG_BIN:-/usr/lib/postgresql/15/bin}
datadir=""
args=()
while [ $# -gt 0 ]; do
  case "$1" in
    -D) datadir=$2; shift 2 ;;
    *) args+=("$1"); shift ;;
  esac
done
[ -n "$datadir" ] || { echo "postgres_as_scalegres: -D DIR is required" >&2; exit 2; }

sockdir=""
for a in "${args[@]}"; do
  case "$a" in
    unix_socket_directories=*) sockdir=${a#unix_socket_directories=} ;;
  esac
done

as_pg=()
if [ "$(id -u)" -eq 0 ]; then
  as_pg=(setpriv --reuid=postgres --regid=postgres --init-groups --)
  chmod 0755 "$(dirname "$datadir")"
  [ -z "$sockdir" ] || chown postgres: "$sockdir"
fi

if [ ! -f "$datadir/PG_VERSION" ]; then
  mkdir -p "$datadir"
  [ ${#as_pg[@]} -eq 0 ] || chown postgres: "$datadir"
  "${as_pg[@]}" "$PG_BIN/initdb" -D "$datadir" -U postgres --auth=trust -E UTF8 \
    --locale=C --no-sync >/dev/null
fi

# A postmaster from before a SIGKILL of this script may still be exiting.
# Once it is a zombie (init reaps it when it gets round to it) it has let go
# of everything, but PostgreSQL would still see its pid in postmaster.pid as
# alive and refuse to start: remove the file (and its socket lock files) then.
if [ -f "$datadir/postmaster.pid" ]; then
  old=$(head -n 1 "$datadir/postmaster.pid" || true)
  for _ in $(seq 1 200); do
    state=$(awk '{print $3}' "/proc/$old/stat" 2>/dev/null || true)
    if [ -z "$old" ] || [ -z "$state" ]; then break; fi
    if [ "$state" = Z ]; then
      rm -f "$datadir/postmaster.pid"
      for lock in "${sockdir:-/nonexistent}"/.s.PGSQL.*.lock; do
        if [ -f "$lock" ] && [ "$(head -n 1 "$lock")" = "$old" ]; then
          rm -f "$lock" "${lock%.lock}"
        fi
      done
      break
    fi
    sleep 0.05
  done
fi

"${as_pg[@]}" "$PG_BIN/postgres" -D "$datadir" "${args[@]}" &
postmaster=$!

# The watcher reads a pipe whose only writer is this script (opened after the
# postmaster was forked, so it does not hold it): end of file means this
# script is gone, SIGKILLed or not. Then it takes the server down with it,
# stopping the postmaster first so it forks no new children.
exec {watch_fd}> >(
  read -r _ || true
  if kill -0 "$postmaster" 2>/dev/null; then
    kill -STOP "$postmaster" 2>/dev/null || true
    for child in $(cat "/proc/$postmaster/task/"*/children 2>/dev/null); do
      kill -KILL "$child" 2>/dev/null || true
    done
    kill -KILL "$postmaster" 2>/dev/null || true
  fi
)

for sig in INT TERM HUP; do
  trap "kill -$sig $postmaster 2>/dev/null || true" "$sig"
done
status=0
while kill -0 "$postmaster" 2>/dev/null; do
  # `wait` returns early when a trapped signal arrives; wait again.
  wait "$postmaster" && status=0 || status=$?
done
exit "$status"
