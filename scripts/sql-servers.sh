#!/usr/bin/env bash
# Installs the database servers the SQL adapter tests (spec/adapters/sql) and bench/sql.ts start
# privately — PostgreSQL (initdb/postgres under /usr/lib/postgresql/<version>/bin, not on PATH) and
# MariaDB (mariadbd, mariadb-install-db). The tests never use the system services the packages
# register; they start their own instances on free ports in temporary directories.
set -euo pipefail
cd "$(dirname "$0")/.."
if ! ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1; then
  SUDO=""
  [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  echo "installing Debian packages: postgresql"
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends postgresql >/dev/null
fi
bash scripts/ensure-packages.sh mariadbd:mariadb-server mariadb-install-db:mariadb-server
echo "SQL servers present: $(ls -d /usr/lib/postgresql/*/bin | tail -1)/postgres, $(/usr/sbin/mariadbd --version 2>/dev/null || mariadbd --version)"
