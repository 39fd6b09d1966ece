#!/usr/bin/env bash
# A PostgreSQL server for the tests of Dipper's PostgreSQL backend (DIPPER_DATABASE_URL): Debian's package, its
# default cluster started, a role and a database for the tests. Run as root; safe to run again. Prints the URL.
set -euo pipefail
if ! command -v pg_ctlcluster >/dev/null 2>&1; then
  apt-get update -qq >&2
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >&2
fi
cluster=$(pg_lsclusters --no-header | awk 'NR==1 {print $1" "$2}')
if [ -z "$cluster" ]; then
  version=$(ls /usr/lib/postgresql | sort -V | tail -1)
  pg_createcluster "$version" main >&2
  cluster="$version main"
fi
# shellcheck disable=SC2086
pg_ctlcluster $cluster start >&2 2>/dev/null || true
port=$(pg_lsclusters --no-header | awk 'NR==1 {print $3}')
for _ in $(seq 1 30); do
  su postgres -c "psql -p $port -Atqc 'SELECT 1'" >/dev/null 2>&1 && break
  sleep 1
done
# Room for `dipper cluster test`'s clusters side by side: each Temporal server keeps up to 24 connections per service
# (temporal-config/cluster/temporal.yaml), four services, beside Dipper's pools; the default 100 ran out.
if [ "$(su postgres -c "psql -p $port -Atqc 'SHOW max_connections'")" -lt 400 ]; then
  su postgres -c "psql -p $port -qc 'ALTER SYSTEM SET max_connections = 400'" >&2
  # shellcheck disable=SC2086
  pg_ctlcluster $cluster restart >&2
  for _ in $(seq 1 30); do
    su postgres -c "psql -p $port -Atqc 'SELECT 1'" >/dev/null 2>&1 && break
    sleep 1
  done
fi
su postgres -c "psql -p $port -v ON_ERROR_STOP=1 -qc \"DO \\\$\\\$ BEGIN IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'dipper') THEN CREATE ROLE dipper LOGIN PASSWORD 'dipper'; END IF; END \\\$\\\$;\"" >&2
# CREATEDB: `dipper cluster` makes the Temporal server's databases and its own with this role.
su postgres -c "psql -p $port -qc 'ALTER ROLE dipper CREATEDB'" >&2
if ! su postgres -c "psql -p $port -Atqc \"SELECT 1 FROM pg_database WHERE datname = 'dipper_test'\"" | grep -q 1; then
  su postgres -c "createdb -p $port -O dipper dipper_test" >&2
fi
echo "postgres://dipper:dipper@127.0.0.1:$port/dipper_test"
