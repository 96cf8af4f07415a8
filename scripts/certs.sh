#!/usr/bin/env bash
# `make certs`: a local certificate authority and the certificates the TLS examples and tests use, made
# with openssl alone (nothing is downloaded). Usage: scripts/certs.sh [DIR] (default ./certs). A DIR
# that already holds ca.pem is left as it is (delete it, or pass --force, to make new ones).
#
#   ca.pem / ca.key                 the local CA ("hivenode local CA"); trust it in clients (curl --cacert)
#   server.pem / server.key         CN=localhost, SAN localhost and 127.0.0.1, server and client use
#   client-<user>.pem / .key        CN=<user> for alice, bob and carol: mutual TLS (the CN is the user)
#   client-expired.pem / .key       CN=alice, valid only in 2020 (refused by every peer)
#   server-expired.pem / .key       CN=localhost, valid only in 2020
#   other-ca.pem / other-ca.key     a second CA that nobody trusts
#   other-server.pem, other-client.pem (and .key)  signed by the other CA (a wrong CA everywhere)
#
# Keys are RSA 2048 (every peer here speaks it: rsyslog's gtls, nats-server, curl, Node); certificates
# live 825 days, the longest that Apple's and the browsers' rules accept for a server certificate.
set -euo pipefail
force=no
dir=""
for arg in "$@"; do
  case "$arg" in
    --force) force=yes ;;
    -h|--help) sed -n '2,15p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) dir="$arg" ;;
  esac
done
dir="${dir:-certs}"
command -v openssl >/dev/null 2>&1 || bash "$(dirname "$0")/ensure-packages.sh" openssl:openssl
if [ -f "$dir/ca.pem" ] && [ "$force" = no ]; then
  echo "certificates already in $dir (scripts/certs.sh --force $dir makes new ones)"
  exit 0
fi
mkdir -p "$dir"
dir="$(cd "$dir" && pwd)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
umask 077

# ca NAME SUBJECT: a self-signed CA
ca() {
  openssl req -x509 -newkey rsa:2048 -nodes -sha256 -days 825 -keyout "$dir/$1.key" -out "$dir/$1.pem" \
    -subj "$2" -addext basicConstraints=critical,CA:TRUE -addext keyUsage=critical,keyCertSign,cRLSign 2>/dev/null
}

# leaf NAME CA CN SAN [START END]: a key and a certificate signed by CA. With START and END
# (YYYYMMDDHHMMSSZ) the validity is that window, through `openssl ca`, the one openssl 3.0 command
# that takes explicit dates (how an expired certificate is made without a fake clock).
leaf() {
  local name="$1" signer="$2" cn="$3" san="$4" start="${5:-}" end="${6:-}"
  local ext="$work/$name.ext"
  {
    echo "basicConstraints=CA:FALSE"
    echo "keyUsage=critical,digitalSignature,keyEncipherment"
    echo "extendedKeyUsage=serverAuth,clientAuth"
    [ -n "$san" ] && echo "subjectAltName=$san"
  } > "$ext"
  openssl req -new -newkey rsa:2048 -nodes -sha256 -keyout "$dir/$name.key" -out "$work/$name.csr" -subj "/CN=$cn" 2>/dev/null
  if [ -z "$start" ]; then
    openssl x509 -req -in "$work/$name.csr" -CA "$dir/$signer.pem" -CAkey "$dir/$signer.key" -CAcreateserial \
      -CAserial "$work/$signer.srl" -days 825 -sha256 -extfile "$ext" -out "$dir/$name.pem" 2>/dev/null
  else
    local db="$work/ca-$name"
    mkdir -p "$db/new"
    : > "$db/index.txt"
    echo 1000 > "$db/serial"
    cat > "$db/ca.cnf" <<EOF
[ca]
default_ca = local
[local]
database = $db/index.txt
new_certs_dir = $db/new
serial = $db/serial
default_md = sha256
policy = any
copy_extensions = none
[any]
commonName = supplied
EOF
    openssl ca -batch -config "$db/ca.cnf" -cert "$dir/$signer.pem" -keyfile "$dir/$signer.key" -in "$work/$name.csr" \
      -startdate "$start" -enddate "$end" -extfile "$ext" -notext -out "$dir/$name.pem" 2>/dev/null
  fi
}

ca ca "/CN=hivenode local CA"
ca other-ca "/CN=not trusted CA"
leaf server ca localhost "DNS:localhost,IP:127.0.0.1"
for user in alice bob carol; do leaf "client-$user" ca "$user" ""; done
leaf client-expired ca alice "" 20200101000000Z 20200201000000Z
leaf server-expired ca localhost "DNS:localhost,IP:127.0.0.1" 20200101000000Z 20200201000000Z
leaf other-server other-ca localhost "DNS:localhost,IP:127.0.0.1"
leaf other-client other-ca alice ""
# keys readable by the user only (umask above); certificates are public
chmod 644 "$dir"/*.pem
echo "certificates written to $dir (CA: $dir/ca.pem)"
