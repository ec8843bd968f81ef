#!/usr/bin/env bash
# Phase build: each library module alone, in layer order, so that none quietly needs a higher one.
# The list is `scripts/check-layering.py --phases` (the layer table there; AetherReceiver joins when the
# package has it, before the Uploader). Stops at the first phase that does not build; prints each phase's time.
#   scripts/build-phases.sh           incremental (`make phases`)
#   scripts/build-phases.sh --clean   the first phase from an empty .build (CI); then the receiver's phase
#                                     must also leave the Uploader unbuilt
set -euo pipefail
cd "$(dirname "$0")/.."
clean=0
case "${1:-}" in
    --clean) clean=1 ;;
    "") ;;
    *) echo "usage: scripts/build-phases.sh [--clean]" >&2; exit 2 ;;
esac
phases=$(python3 scripts/check-layering.py --phases)
if [ "$clean" -eq 1 ]; then rm -rf .build; fi
bin=$(swift build --show-bin-path)
total_start=$(date +%s)
for target in $phases; do
    start=$(date +%s)
    echo "== phase $target"
    if ! swift build --explicit-target-dependency-import-check error --target "$target"; then
        echo "phase build: $target does not build on the layers below it" >&2
        exit 1
    fi
    # SwiftPM plans every target (an AetherUploader.build folder with its file map appears at once); compiled
    # means a module or an object file.
    if [ "$clean" -eq 1 ] && [ "$target" = AetherReceiver ] &&
        { [ -e "$bin/Modules/AetherUploader.swiftmodule" ] || compgen -G "$bin/AetherUploader.build/*.o" >/dev/null; }; then
        echo "phase build: building AetherReceiver built AetherUploader; the receiver must use layers 1-6 only" >&2
        exit 1
    fi
    echo "phase $target: $(($(date +%s) - start)) s"
done
echo "phase build: $(wc -w <<<"$phases") phases in $(($(date +%s) - total_start)) s"
