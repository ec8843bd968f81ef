#!/usr/bin/env bash
# Runs the whole test suite (Swift Testing, interop peers included), then every fuzz target over its
# corpus, and ends with one plain closing line: "tests: N passed, M failed".
#
# Three runs of the one test build. Tests that wait synchronously (for child processes, peers, sockets)
# hold Swift's cooperative threads (two on a 2-core machine) while they wait, and starve the others for
# minutes; the HTTP client's tests of keep-alive reuse and pre-warmed connections measure exactly what such a
# stall breaks (an idle connection outlives the server's keep-alive). So: first those timing tests alone,
# then everything else but the suites that drive `aether` as child processes, then those suites.
set -uo pipefail
cd "$(dirname "$0")/.."
# The suites that spawn and wait for processes (kept in one place; a new such suite is added here).
process_suites='UploadCommandLiveTests|UploadEndToEndLiveTests|DemoLiveTests|UploadProgressBarLiveTests'
process_suites+='|ReceiverInteropTests|ReceiverCrashTests|SessionLiveTests|SessionKeysLiveTests'
process_suites+='|SessionPythonHostLiveTests|FileSafetyLiveTests|BenchCommandLineTests|LayeringCheckTests'
process_suites+='|ClientCrashTortureTests|ReceiverCrashNativeLiveTests|UploadResumeEdgeLiveTests|UploadFaultLiveTests'
process_suites+='|LTETraceLiveTests|UploadMemoryLiveTests|ReceiverLoadLiveTests|CommandLineLiveTests|FileCommandsLiveTests'
process_suites+='|SessionStateDirectoryLiveTests|FountainMemoryLiveTests|FollowLiveTests|ServeS3BlobsLiveTests'
process_suites+='|ReceiverFleetLiveTests|ReceiverAbuseLiveTests|ConcatenationLimitsTests|ReceiverSlowlorisLiveTests'
process_suites+='|UploadLyingServerLiveTests|FrozenIETFAppendLiveTests|FrozenTusPatchLiveTests|LyingReceiverLiveTests|ChunkContinuationLiveTests|FullDiskRemovalTests'
process_suites+='|S3BackendInteropTests|S3RGWInteropTests'
process_suites+='|E2EPeerScriptTests|PathChangeLiveTests|UploadCaptureLiveTests'
timing_suites='HTTPClientInteropTests|HTTPClientDeadlineInteropTests|BenchChildTests|LinkLabTests|LinkLabLiveTests'
# The link lab's upload test (LabUploadLiveTests) measures progress between timed resets: alone, like the lab's suite.
timing_suites+='|LabUploadLiveTests'
timing_log=$(mktemp -t aether-test.XXXXXX)
first_log=$(mktemp -t aether-test.XXXXXX)
second_log=$(mktemp -t aether-test.XXXXXX)
trap 'rm -f "$timing_log" "$first_log" "$second_log"' EXIT
status=0
swift build --build-tests --explicit-target-dependency-import-check error || status=1
if [ "$status" -eq 0 ]; then
    swift test --skip-build --filter "$timing_suites" 2>&1 | tee "$timing_log"
    [ "${PIPESTATUS[0]}" -eq 0 ] || status=1
    swift test --skip-build --skip "$process_suites|$timing_suites" 2>&1 | tee "$first_log"
    [ "${PIPESTATUS[0]}" -eq 0 ] || status=1
    swift test --skip-build --filter "$process_suites" 2>&1 | tee "$second_log"
    [ "${PIPESTATUS[0]}" -eq 0 ] || status=1
fi
# Each run's own closing "Test run with N tests" line (the last one it prints).
count() {
    local n
    n=$(grep -E 'Test run with [0-9]+ tests?' "$1" | tail -1 | sed -nE 's/.*Test run with ([0-9]+) tests?.*/\1/p')
    echo "${n:-0}"
}
total=$(($(count "$timing_log") + $(count "$first_log") + $(count "$second_log")))
failed=$(cat "$timing_log" "$first_log" "$second_log" | grep -E '^✘ Test ' | grep -v '^✘ Test run with' | sed -E 's/ (failed|recorded an issue).*//' | sort -u | wc -l)
if [ "$status" -eq 0 ]; then
    scripts/run-fuzz-corpora.sh || status=$?
fi
echo "tests: $((total - failed)) passed, $failed failed"
if [ "$total" -eq 0 ] && [ "$status" -eq 0 ]; then
    echo "no test ran" >&2
    exit 1
fi
exit "$status"
