#!/usr/bin/env bash
# `make bench`: runs every benchmark in bench/ (each measures hivenode against a named baseline or peer
# in the same run, medians of interleaved rounds, and prints `BENCH {…}` lines beside its human ones),
# then writes BENCHMARKS.md from their output with scripts/bench-report.ts.
# Installs what the benches need first: wrk, nats-server, redis-server and Go from Debian, PostgreSQL and
# MariaDB (scripts/sql-servers.sh), and the bench-only peers in bench/peers (npm ci). The servers are
# started privately by the benches themselves and stopped afterwards.
# Round sizes: the BENCH_* variables at the top of each bench; the defaults keep the suite under
# 15 minutes on 2 cores. BENCH_TIMEOUT (seconds, default 300) stops a bench that hangs; a bench that
# needs longer says so in a `bench-timeout: N` line of its header (the callgrind count runs 3-6 min).
set -euo pipefail
cd "$(dirname "$0")/.."
started=$(date +%s)
npx tsc -p tsconfig.json   # the benches run compiled, from dist/bench
# tsc writes dist/bin/hivenode.js again: the bundle (launcher, cli.cjs, chunks) is what users run and what
# bench/startup.ts and the tracing benches start
node --import tsx scripts/bundle.ts
bash scripts/ensure-packages.sh wrk:wrk nats-server:nats-server redis-server:redis-server go:golang-go valgrind:valgrind rsyslogd:rsyslog
bash scripts/sql-servers.sh >/dev/null
export PATH="$PATH:/usr/sbin"
peers=bench/peers
if [ ! -f "$peers/node_modules/.package-lock.json" ] || [ "$peers/package-lock.json" -nt "$peers/node_modules/.package-lock.json" ]; then
  # npm ci refuses a lock that lists optional per-platform packages (msgpackr-extract for other systems)
  # a registry does not carry in that version; npm install --no-save then installs the same locked tree
  npm ci --prefix "$peers" --no-audit --no-fund || npm install --prefix "$peers" --no-save --no-audit --no-fund
fi

# BENCH_LOGS=dir keeps each bench's output there (scripts/bench-report.ts <dir> <seconds> writes the report again from it)
if [ -n "${BENCH_LOGS:-}" ]; then
  logs=$BENCH_LOGS
  mkdir -p "$logs"
else
  logs=$(mktemp -d -t hn-bench-XXXXXX)
  trap 'rm -rf "$logs"' EXIT
fi
for b in bench/*.ts; do
  [ "$b" = bench/lib.ts ] && continue
  name=$(basename "$b" .ts)
  echo "== $b"
  t0=$(date +%s)
  code=0
  # the compiled benches (`make bench` builds first): dist/ is what `hivenode` runs, and tsx's
  # on-the-fly transform measured 15-30% slower on the queue's and gateway's hot paths
  limit=$(grep -m1 -oE 'bench-timeout: [0-9]+' "$b" | grep -oE '[0-9]+$' || true)
  timeout "${limit:-${BENCH_TIMEOUT:-300}}" node --expose-gc "dist/bench/$name.js" > "$logs/$name.log" 2>&1 || code=$?
  grep -v '^BENCH ' "$logs/$name.log" || true
  echo "$code" > "$logs/$name.exit"
  echo $(( $(date +%s) - t0 )) > "$logs/$name.seconds"
  [ "$code" -eq 0 ] || echo "(exit code $code)"
done
total=$(( $(date +%s) - started ))
node --import tsx scripts/bench-report.ts "$logs" "$total" > BENCHMARKS.md
echo "wrote BENCHMARKS.md in $total s"
