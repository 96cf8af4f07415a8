#!/usr/bin/env bash
# `make servers`: installs the Debian server packages the adapter tests use. The tests themselves start
# private instances on free ports in temporary directories (never the system services) and stop them
# afterwards, so nothing is left running; `make test` calls this first.
set -euo pipefail
cd "$(dirname "$0")/.."
had_squid=no
{ command -v squid >/dev/null 2>&1 || [ -x /usr/sbin/squid ]; } && had_squid=yes
bash scripts/ensure-packages.sh nats-server:nats-server logger:bsdutils rsyslogd:rsyslog "/usr/lib/*/rsyslog/lmnsd_gtls.so:rsyslog-gnutls" \
  "/usr/lib/*/rsyslog/imrelp.so:rsyslog-relp" \
  /usr/lib/python3/dist-packages/fusepy.py:python3-fusepy fusermount:fuse3 ip:iproute2 "$@"
# Debian's squid package starts a system squid on port 3128 when it is installed; the proxy tests run
# their own on a free port, so one started by this install is stopped (one that was there before is left alone)
if [ "$had_squid" = no ] && { command -v squid >/dev/null 2>&1 || [ -x /usr/sbin/squid ]; }; then
  SUDO=""
  [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  if command -v systemctl >/dev/null 2>&1 && systemctl is-active --quiet squid 2>/dev/null; then
    $SUDO systemctl stop squid && $SUDO systemctl disable --quiet squid || true
  elif command -v service >/dev/null 2>&1; then
    $SUDO service squid stop >/dev/null 2>&1 || true
  fi
fi
echo "server packages present: nats-server $(/usr/sbin/nats-server --version 2>/dev/null || nats-server --version), rsyslogd (with gtls and relp), logger"
