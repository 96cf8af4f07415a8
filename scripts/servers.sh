#!/usr/bin/env bash
# `make servers`: installs the Debian server packages the adapter tests use. The tests themselves start
# private instances on free ports in temporary directories (never the system services) and stop them
# afterwards, so nothing is left running; `make test` calls this first.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/ensure-packages.sh nats-server:nats-server logger:bsdutils rsyslogd:rsyslog "$@"
echo "server packages present: nats-server $(/usr/sbin/nats-server --version 2>/dev/null || nats-server --version), rsyslogd, logger"
