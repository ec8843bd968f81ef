#!/usr/bin/env bash
# Runs the whole test suite (Swift Testing, interop peers included), then every fuzz target over its
# corpus, and ends with one plain closing line: "tests: N passed, M failed".
set -uo pipefail
cd "$(dirname "$0")/.."
log=$(mktemp -t aether-test.XXXXXX)
trap 'rm -f "$log"' EXIT
swift test --explicit-target-dependency-import-check error 2>&1 | tee "$log"
status=${PIPESTATUS[0]}
summary=$(grep -E 'Test run with [0-9]+ tests?' "$log" | tail -1)
total=$(sed -nE 's/.*Test run with ([0-9]+) tests?.*/\1/p' <<<"$summary")
failed=$(grep -E '^✘ Test ' "$log" | sed -E 's/ (failed|recorded an issue).*//' | sort -u | wc -l)
if [ "$status" -eq 0 ]; then
    scripts/run-fuzz-corpora.sh || status=$?
fi
total=${total:-0}
echo "tests: $((total - failed)) passed, $failed failed"
if [ "$total" -eq 0 ] && [ "$status" -eq 0 ]; then
    echo "no test ran" >&2
    exit 1
fi
exit "$status"
