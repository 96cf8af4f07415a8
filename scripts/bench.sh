#!/usr/bin/env bash
# `make bench`: every benchmark in bench/, each printing its ratio against a baseline measured in
# the same run.
set -euo pipefail
cd "$(dirname "$0")/.."
for b in bench/*.ts; do
  echo "== $b"
  node --import tsx --expose-gc "$b"
done
