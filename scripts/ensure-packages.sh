#!/usr/bin/env bash
# Installs Debian packages the tests need when their command is missing: `ensure-packages.sh cmd:pkg ...`.
# A package without a command is named by a file it installs instead, as an absolute path that may hold
# a glob (`/usr/lib/*/rsyslog/lmnsd_gtls.so:rsyslog-gnutls`): present when some file matches.
# Runs apt-get update once, only when something has to be installed. Needs root (or sudo).
set -euo pipefail
missing=()
for pair in "$@"; do
  cmd=${pair%%:*}; pkg=${pair#*:}
  if [[ $cmd == /* ]]; then
    compgen -G "$cmd" >/dev/null || missing+=("$pkg")
  else
    command -v "$cmd" >/dev/null 2>&1 || [ -x "/usr/sbin/$cmd" ] || missing+=("$pkg")
  fi
done
[ ${#missing[@]} -eq 0 ] && exit 0
SUDO=""
[ "$(id -u)" -ne 0 ] && SUDO="sudo"
echo "installing Debian packages: ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
