#!/usr/bin/env bash
# `make test`: type-check and build, lint, then every mocha suite (unit, integration on the embedded
# hive, adapters against real servers started here and stopped afterwards).
set -euo pipefail
cd "$(dirname "$0")/.."
echo "== packages the tests need"
bash scripts/servers.sh chromium:chromium wrk:wrk squid:squid openssl:openssl curl:curl
bash scripts/sql-servers.sh
# the partition row runs on nats-server 2.10 (Debian trixie's package, verified and unpacked into .servers/)
HIVENODE_NATS_SERVER_2_10="$(bash scripts/nats-server-2.10.sh)"
export HIVENODE_NATS_SERVER_2_10
export PATH="$PATH:/usr/sbin"
# the tests talk to servers of their own on 127.0.0.1: a proxy set in this shell would reroute the HTTP
# client's requests there (the proxy tests set their own variables on the processes they start)
unset HTTP_PROXY HTTPS_PROXY http_proxy https_proxy NO_PROXY no_proxy PROXY
echo "== build (tsc)"
npx tsc -p tsconfig.json
# the processes the tests start run this build, not the sources through tsx: about a second less each
# (spec/support/hivenode-bin.ts)
export HIVENODE_TEST_BUILD=dist
echo "== lint (prettier, eslint, knip)"
# formatted as Prettier writes it (.prettierrc.json: width 120; the parameter tables of config/ keep a
# row a line); `make format` rewrites what differs
npx prettier --check '**/*.ts' --log-level warn
npx eslint .
# no export that nothing imports (knip.json)
npx knip --no-progress
echo "== tests (mocha)"
# .mocharc.json names no files, so `npx mocha spec/x.spec.ts` runs that file alone (with the files in the
# config, mocha ran them all as well); every suite is named in spec/all.mocharc.json
# the spec reporter's output, and test-artifacts/test-durations.txt: where the run's time went, file by
# file (spec/support/durations-reporter.ts), to keep make test within its time (README: Development)
DURATIONS=(--reporter ./spec/support/durations-reporter.ts)
if [ "$#" -eq 0 ]; then npx mocha --config spec/all.mocharc.json "${DURATIONS[@]}"; else npx mocha "$@"; fi
if [ "$#" -eq 0 ]; then
  # the same queue and flow suites on the other store: every node they start runs its queue or flow
  # on a JetStream server of its own (spec/integration/queue-store.ts); the flow's examples and its
  # check command start no store of the test's, so they run once
  echo "== the queue and flow suites again, on the JetStream store (HIVENODE_QUEUE_STORE=jetstream)"
  HIVENODE_QUEUE_STORE=jetstream npx mocha --no-config --node-option import=tsx --extension ts --timeout 20000 --exit \
    "${DURATIONS[@]}" --reporter-option out=test-artifacts/test-durations-jetstream \
    --ignore 'spec/integration/flow/example*.spec.ts' --ignore spec/integration/flow/check-cli.spec.ts \
    'spec/integration/queue/*.spec.ts' 'spec/integration/flow/*.spec.ts'
fi
