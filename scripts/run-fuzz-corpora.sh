#!/usr/bin/env bash
# Runs every fuzz target over its checked-in corpus once (no new inputs): a regression check that
# `make test` can afford. `make fuzz` explores for a bounded time instead.
set -euo pipefail
cd "$(dirname "$0")/.."
shopt -s nullglob
targets=(Fuzz/*/)
if [ ${#targets[@]} -eq 0 ]; then
    echo "fuzz corpora: no fuzz targets in Fuzz/"
    exit 0
fi
exec scripts/fuzz.sh 0
