#!/usr/bin/env bash
# A local PostgreSQL server for the tests and the scale-out benchmark:
# installs Debian's `postgresql` if missing, starts its cluster, creates a
# role that may create databases, drops the databases earlier test runs left
# (jt_*), and prints the role's connection URL on stdout.
set -euo pipefail
if ! ls /usr/lib/postgresql/*/bin/pg_ctl >/dev/null 2>&1; then
  apt-get update -qq >&2 && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >&2
fi
version=$(ls /usr/lib/postgresql | sort -V | tail -1)
cluster() { pg_lsclusters -h | awk -v v="$version" '$1 == v && $2 == "main"'; }
if [ -z "$(cluster)" ]; then
  pg_createcluster "$version" main >&2
fi
if [ "$(cluster | awk '{print $4}')" != "online" ]; then
  pg_ctlcluster "$version" main start >&2
fi
port=$(cluster | awk '{print $3}')
as_postgres() {
  if [ "$(id -u)" = 0 ]; then su postgres -s /bin/sh -c "$1"; else sudo -u postgres sh -c "$1"; fi
}
psql_admin() { as_postgres "psql -p $port -X -q -tA -c \"$1\""; }
if [ "$(psql_admin "SELECT 1 FROM pg_roles WHERE rolname = 'jacobian_test'")" != "1" ]; then
  psql_admin "CREATE ROLE jacobian_test LOGIN CREATEDB PASSWORD 'jacobian_test'" >&2
fi
if [ "$(psql_admin "SELECT 1 FROM pg_database WHERE datname = 'jacobian_test'")" != "1" ]; then
  psql_admin "CREATE DATABASE jacobian_test OWNER jacobian_test" >&2
fi
for db in $(psql_admin "SELECT datname FROM pg_database WHERE datname LIKE 'jt\\_%'"); do
  psql_admin "DROP DATABASE IF EXISTS $db WITH (FORCE)" >&2
done
echo "postgres://jacobian_test:jacobian_test@127.0.0.1:${port}/jacobian_test"
