#!/usr/bin/env bash
# `make demo`: `aether demo` with the release build. The demo starts a receiver on 127.0.0.1 with a temporary
# store, uploads a test file with the live progress bar, interrupts it part way, resumes it with the same
# command, verifies the stored object chunk by chunk, then shows an erasure-coded rebuild and a paired secure
# session. Any step that does not behave as shown stops it with exit status 1.
set -euo pipefail
cd "$(dirname "$0")/.."
exec .build/release/aether demo "$@"
