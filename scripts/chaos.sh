#!/usr/bin/env bash
# `make chaos`: the reliability battery (spec/reliability) at full scale (HIVENODE_CHAOS=full), then
# RELIABILITY.md written from what the run recorded (scripts/reliability-report.ts). `make test` runs
# the same battery scaled down. Installs the servers and tools it starts privately (PostgreSQL,
# nats-server, wrk); the tests start and stop them themselves.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/servers.sh wrk:wrk gcc:gcc
bash scripts/sql-servers.sh
# the partition row runs on nats-server 2.10 (Debian trixie's package, verified and unpacked into .servers/)
HIVENODE_NATS_SERVER_2_10="$(bash scripts/nats-server-2.10.sh)"
export HIVENODE_NATS_SERVER_2_10
export PATH="$PATH:/usr/sbin"
export HIVENODE_CHAOS=full
export HIVENODE_RELIABILITY_RECORDS="$PWD/test-artifacts/reliability-full.jsonl"
began=$(date +%s)
status=0
# --no-config: .mocharc.json would add every other suite; these are its settings for the battery only
npx mocha --no-config --node-option import=tsx --extension ts --timeout 20000 --exit 'spec/reliability/**/*.spec.ts' || status=$?
node --import tsx scripts/reliability-report.ts --records "$HIVENODE_RELIABILITY_RECORDS" --out RELIABILITY.md \
  --command 'make chaos' --seconds "$(( $(date +%s) - began ))"
echo "RELIABILITY.md written ($(( $(date +%s) - began )) s; mocha exit status $status)"
exit "$status"
