#!/usr/bin/env bash
# nats-server 2.10 from Debian's next release (trixie), for the tests that need it (the partition row,
# README: Reliability): bookworm's 2.9.10 loses acknowledged JetStream entries when a server is cut off
# and healed (measured, RELIABILITY.md). The package is taken only as apt would trust it: trixie's
# InRelease verified by gpgv against the Debian archive keyring, Packages.xz by the checksum it signs,
# the .deb by the checksum Packages.xz lists; then unpacked (dpkg-deb -x) into .servers/, nothing
# installed system-wide. Prints the binary's path; a second run reuses it. DEBIAN_MIRROR moves the source.
set -euo pipefail
cd "$(dirname "$0")/.."
dir="$PWD/.servers/nats-server-trixie"
bin="$dir/nats-server"
if [ -x "$bin" ] && "$bin" --version 2>/dev/null | grep -qE 'v2\.(1[0-9]|[2-9][0-9])\.'; then echo "$bin"; exit 0; fi
bash scripts/ensure-packages.sh curl:curl xz:xz-utils gpgv:gpgv dpkg-deb:dpkg >&2
mirror="${DEBIAN_MIRROR:-http://deb.debian.org/debian}"
arch="$(dpkg --print-architecture)"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
echo "nats-server 2.10: fetching trixie's package from $mirror" >&2
curl -fsS --retry 3 -o "$tmp/InRelease" "$mirror/dists/trixie/InRelease"
gpgv --keyring /usr/share/keyrings/debian-archive-keyring.gpg --output "$tmp/Release" "$tmp/InRelease" 2>/dev/null \
  || { echo "nats-server 2.10: trixie's InRelease does not verify against /usr/share/keyrings/debian-archive-keyring.gpg (apt-get install debian-archive-keyring)" >&2; exit 1; }
index="main/binary-$arch/Packages.xz"
sum="$(awk -v f="$index" '/^SHA256:/{s=1;next} /^[^ ]/{s=0} s && $3==f {print $1}' "$tmp/Release")"
[ -n "$sum" ] || { echo "nats-server 2.10: trixie's Release lists no $index" >&2; exit 1; }
curl -fsS --retry 3 -o "$tmp/Packages.xz" "$mirror/dists/trixie/$index"
echo "$sum  $tmp/Packages.xz" | sha256sum -c --quiet
read -r file debsum < <(xz -dc "$tmp/Packages.xz" | awk '/^Package: nats-server$/{p=1} p&&/^Filename:/{f=$2} p&&/^SHA256:/{s=$2} p&&/^$/{print f, s; exit}')
[ -n "${file:-}" ] || { echo "nats-server 2.10: trixie has no nats-server package" >&2; exit 1; }
curl -fsS --retry 3 -o "$tmp/nats-server.deb" "$mirror/$file"
echo "$debsum  $tmp/nats-server.deb" | sha256sum -c --quiet
dpkg-deb -x "$tmp/nats-server.deb" "$tmp/root"
mkdir -p "$dir"
install -m 755 "$tmp/root/usr/sbin/nats-server" "$bin"
echo "nats-server 2.10: $("$bin" --version) in $dir" >&2
echo "$bin"
