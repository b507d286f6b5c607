#!/bin/sh
# The compose deployment's PostgreSQL (Debian's postgresql-15). On the first start: a cluster with
# the role and database `tocsin`, whose password is the fifth field of the pgpass line in
# $PGPASSFILE (a compose secret, the file the Tocsin services read too), made in a scratch
# directory and renamed into place only once complete (a first start that fails leaves nothing
# half-made). Then the server on 127.0.0.1:$PGPORT as the `postgres` user. It starts as root only
# to read the secret and own the volume ($PGROOT).
set -eu
PGROOT=${PGROOT:-/var/lib/postgresql/data}
PGDATA=$PGROOT/15
PGPORT=${PGPORT:-5432}
BIN=/usr/lib/postgresql/15/bin
as_postgres() { env -u PGPASSFILE setpriv --reuid=postgres --regid=postgres --init-groups "$@"; }

chown postgres:postgres "$PGROOT"
if [ ! -s "$PGDATA/PG_VERSION" ]; then
  [ -r "${PGPASSFILE:-}" ] || { echo "postgres: PGPASSFILE (the secret) is not readable: ${PGPASSFILE:-unset}" >&2; exit 1; }
  password=$(head -n 1 "$PGPASSFILE" | cut -d: -f5-)
  [ -n "$password" ] || { echo "postgres: no password in $PGPASSFILE (want *:*:*:tocsin:PASSWORD)" >&2; exit 1; }
  echo "postgres: first start: creating the cluster in $PGDATA" >&2
  scratch=$PGROOT/15.init
  rm -rf "$scratch"
  as_postgres "$BIN/initdb" -D "$scratch" -U postgres -A peer --auth-host=scram-sha-256 -E UTF8 --locale=C.UTF-8 >/dev/null
  # only a local socket while the role is made
  as_postgres "$BIN/pg_ctl" -D "$scratch" -s -w -o "-c listen_addresses='' -c unix_socket_directories=/tmp" start
  as_postgres psql -q -v ON_ERROR_STOP=1 -h /tmp -U postgres -d postgres -v pw="$password" <<'SQL'
CREATE ROLE tocsin LOGIN PASSWORD :'pw';
CREATE DATABASE tocsin OWNER tocsin;
SQL
  as_postgres "$BIN/pg_ctl" -D "$scratch" -s -w -m fast stop
  mv "$scratch" "$PGDATA"
  echo "postgres: cluster ready: role and database tocsin" >&2
fi
exec setpriv --reuid=postgres --regid=postgres --init-groups "$BIN/postgres" -D "$PGDATA" \
  -c listen_addresses=127.0.0.1 -c port="$PGPORT" -c unix_socket_directories=/tmp -c max_connections=100
