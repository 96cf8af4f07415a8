#!/usr/bin/env bash
# The three machines of this example on one machine, to try it before you have three: three nats-servers
# and three nodes on 127.0.0.1, from the same files with their machine names, ports and paths rewritten
# into a temporary directory (removed again at the end). Ctrl-C (or SIGTERM) stops all six processes.
#
#   bash examples/three-machines/loopback.sh            # from the clone: HIVENODE="npx hivenode" bash …
#
# Ports from LOOPBACK_BASE_PORT (default 14000): NATS clients on +0..+2, cluster routes on +10..+12, the
# three gateways on +20..+22. HIVE_TOKEN is made up unless set.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
base=${LOOPBACK_BASE_PORT:-14000}
hivenode=${HIVENODE:-hivenode}
command -v nats-server >/dev/null || { echo "loopback.sh: nats-server is not installed (Debian: apt-get install nats-server)" >&2; exit 2; }
dir=$(mktemp -d "${TMPDIR:-/tmp}/hivenode-three-machines-XXXXXX")
export HIVE_TOKEN=${HIVE_TOKEN:-loopback-$RANDOM$RANDOM}
machines=(a b c)
pids=()
stop() {
  trap - EXIT INT TERM
  kill "${pids[@]}" 2>/dev/null || true
  wait "${pids[@]}" 2>/dev/null || true
  rm -rf "$dir"
}
trap stop EXIT
trap 'exit 0' INT TERM
routes=""
for i in 0 1 2; do routes="$routes -e s/nats-${machines[$i]}\.internal:6222/127.0.0.1:$((base + 10 + i))/"; done
urls=()
for i in 0 1 2; do urls+=("nats://127.0.0.1:$((base + i))"); done
for i in 0 1 2; do
  x=${machines[$i]}
  # shellcheck disable=SC2086
  sed -e "s#listen: \"0.0.0.0:4222\"#listen: \"127.0.0.1:$((base + i))\"#" \
      -e "s#listen: \"0.0.0.0:6222\"#listen: \"127.0.0.1:$((base + 10 + i))\"#" \
      -e "s#store_dir: \"/var/lib/nats\"#store_dir: \"$dir/nats-$x\"#" $routes \
      "$here/nats-$x.conf" > "$dir/nats-$x.conf"
  nats-server -c "$dir/nats-$x.conf" > "$dir/nats-$x.log" 2>&1 &
  pids+=($!)
done
for i in 0 1 2; do
  x=${machines[$i]}
  others=$(for j in 0 1 2; do [ "$j" = "$i" ] || printf ',%s' "${urls[$j]}"; done)
  sed -e "s#SERVERHOST: .*#SERVERHOST: ${urls[$i]}$others#" \
      -e "s#Port: 8080#Port: $((base + 20 + i))#" \
      -e "s#RecordFile: /var/lib/hivenode/work.jsonl#RecordFile: $dir/work-$x.jsonl#" \
      "$here/node.yaml" > "$dir/node-$x.yaml"
  # shellcheck disable=SC2086
  $hivenode run "$dir/node-$x.yaml" > "$dir/node-$x.log" 2>&1 &
  pids+=($!)
done
echo "three nats-servers and three nodes on 127.0.0.1 (files and logs in $dir)"
for i in 0 1 2; do echo "  machine ${machines[$i]}: NATS ${urls[$i]}, gateway http://127.0.0.1:$((base + 20 + i))"; done
echo "try:  curl -s http://127.0.0.1:$((base + 20))/jobs/action -d '{\"order\":[\"42\"]}'   # any gateway → the queue's holder"
echo "      tail -f $dir/work-*.jsonl   # what the worker of each machine received; Ctrl-C stops everything"
wait
