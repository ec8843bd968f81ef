#!/usr/bin/env bash
# Retrains the fused bandwidth predictor's model (LogLagModel.trained) from the training half of Traces/ and writes
# its Swift source. Deterministic: on the same traces it rewrites the same file. See docs/SCHEDULING.md.
set -euo pipefail
cd "$(dirname "$0")/.."
out=Sources/Scheduling/Prediction/LogLagModel+Trained.swift
swift build -c release --product aether-bench
tmp=$(mktemp --suffix=.swift "${out%.swift}.XXXXXX")
trap 'rm -f "$tmp"' EXIT
.build/release/aether-bench predict --train >"$tmp"
swift format --in-place "$tmp"
mv "$tmp" "$out"
trap - EXIT
echo "wrote $out; rebuild and run \`aether-bench predict\` for the held-out scores"
