#!/usr/bin/env bash
# Builds every fuzz target in Fuzz/<name>/ as a libFuzzer binary and runs it.
#
#   scripts/fuzz.sh SECONDS   explore each target for SECONDS (make fuzz); new inputs go to
#                             fuzz-out/<name>/corpus, crashes to fuzz-out/<name>/
#   scripts/fuzz.sh 0         run each target over its checked-in corpus once (make test)
#   scripts/fuzz.sh S NAME..  only the named targets
#
# Build: the library modules are compiled once by SwiftPM with coverage and AddressSanitizer
# (`swift build --sanitize fuzzer --sanitize address`) into .build-fuzz; each target is then one
# `swiftc -sanitize=fuzzer,address -parse-as-library` of Fuzz/Support/*.swift and Fuzz/<name>/*.swift,
# linked with those objects. Both steps are skipped when nothing changed.
#
# A target is a folder Fuzz/<name>/ with one Swift file defining
#   func fuzzInput(_ bytes: UnsafeRawBufferPointer)
# (it may import AetherIO, AetherIntegrity, AetherCoding, AetherScheduling, AetherSecurity,
# AetherTransport, AetherReceiver and check properties with FuzzCheck.require)
# and a small checked-in corpus in Fuzz/<name>/corpus/. See Fuzz/README.md.
set -euo pipefail
cd "$(dirname "$0")/.."

seconds="${1:-30}"
shift || true
if ! [[ "$seconds" =~ ^[0-9]+$ ]]; then
    echo "usage: scripts/fuzz.sh SECONDS [TARGET...]  (0 = run each corpus once)" >&2
    exit 2
fi

scratch=.build-fuzz
# The modules the targets may import. Each is built by name: no one of them depends on all the others
# (AetherTransport does not need Coding or Scheduling), so building the highest alone would miss some.
modules=(AetherIO AetherIntegrity AetherCoding AetherScheduling AetherSecurity AetherTransport AetherReceiver
    AetherTestSupport)
c_objects=(CAetherURing CAetherKernels)

if [ $# -gt 0 ]; then
    names=("$@")
else
    names=()
    for dir in Fuzz/*/; do
        name=$(basename "$dir")
        [ "$name" = Support ] && continue
        names+=("$name")
    done
fi
if [ ${#names[@]} -eq 0 ]; then
    echo "fuzz: no targets in Fuzz/"
    exit 0
fi

echo "fuzz: building ${modules[*]} with -sanitize=fuzzer,address in $scratch"
for module in "${modules[@]}"; do
    if ! build_log=$(swift build --scratch-path "$scratch" --sanitize fuzzer --sanitize address --target "$module" 2>&1)
    then
        echo "$build_log" >&2
        exit 1
    fi
done
debug="$scratch/debug"

# Only the objects of sources that still exist: a source deleted since the last build leaves its object in
# the scratch folder, and linking it would bring back symbols that no longer belong to the package.
declare -A current=()
while IFS= read -r source; do current["$(basename "$source").o"]=1; done < <(find Sources -name '*.swift')
objects=()
for module in "${modules[@]}"; do
    for object in "$debug/$module.build/"*.swift.o; do
        [ -n "${current[$(basename "$object")]:-}" ] && objects+=("$object")
    done
done
for module in "${c_objects[@]}"; do objects+=("$debug/$module.build/"*.o); done
# The targets may use what the modules give this package (`package` access, e.g. the native wire types): they are
# compiled as part of the same package, whose name SwiftPM derived from the checkout (its build description says it).
package_name=$(python3 -c 'import re, sys; m = re.search(r"\"-package-name\",\s*\"([^\"]+)\"", open(sys.argv[1]).read()); print(m.group(1) if m else "")' "$debug/description.json")
if [ -z "$package_name" ]; then
    echo "fuzz: no -package-name in $debug/description.json" >&2
    exit 1
fi
flags=(
    -package-name "$package_name"
    -sanitize=fuzzer,address -parse-as-library -swift-version 6 -strict-memory-safety -warnings-as-errors -g -Onone
    -I "$debug/Modules"
    -Xcc -fmodule-map-file=Sources/C/CAetherOpenSSL/module.modulemap
    -Xcc -fmodule-map-file=Sources/C/CAetherSodium/module.modulemap
    -Xcc -fmodule-map-file=Sources/C/CAetherZlib/module.modulemap
    -Xcc -fmodule-map-file=Sources/C/CAetherCurl/module.modulemap
    -Xcc -fmodule-map-file=Sources/C/CAetherZstd/module.modulemap
    -Xcc -fmodule-map-file=Sources/C/CAetherSQLite/module.modulemap
    -Xcc -fmodule-map-file=Sources/C/CAetherMicroHTTPD/module.modulemap
    -Xcc -fmodule-map-file=Sources/C/CAetherPQ/module.modulemap
    $(pkg-config --cflags-only-I libpq | sed 's/-I/-Xcc -I/g')
    -Xcc -fmodule-map-file="$debug/CAetherURing.build/module.modulemap"
    -Xcc -fmodule-map-file="$debug/CAetherKernels.build/module.modulemap"
)
libraries=($(pkg-config --libs libsodium openssl zlib liburing libcurl libzstd sqlite3 libmicrohttpd libpq))

mkdir -p "$scratch/fuzz"
failed=()
for name in "${names[@]}"; do
    dir="Fuzz/$name"
    if [ ! -d "$dir/corpus" ] || ! compgen -G "$dir/*.swift" >/dev/null; then
        echo "fuzz: $dir needs a Swift file and a corpus/ folder" >&2
        exit 1
    fi
    binary="$scratch/fuzz/$name"
    # Relink only when a source or a library object is newer than the binary.
    if [ ! -x "$binary" ] || [ -n "$(find "$dir" Fuzz/Support "${objects[@]}" -newer "$binary" \
        \( -name '*.swift' -o -name '*.o' \) -print -quit)" ]; then
        echo "fuzz: linking $name"
        swiftc "${flags[@]}" -module-name "Fuzz_${name//-/_}" Fuzz/Support/*.swift "$dir"/*.swift "${objects[@]}" \
            "${libraries[@]}" -o "$binary" 2> >(grep -v "Cannot export local symbol '__asan" >&2)
    fi

    out="fuzz-out/$name"
    mkdir -p "$out"
    # The Swift runtime's own crash handler would fight libFuzzer's for the signal.
    export SWIFT_BACKTRACE=enable=no
    # Leak checks need ptrace, which containers often refuse; the targets hold no long-lived state.
    options=(-detect_leaks=0 -artifact_prefix="$out/" -print_final_stats=0)
    # A libFuzzer dictionary (tokens such as JSON keys) helps a target reach past its syntax checks.
    if [ -f "$dir/fuzz.dict" ]; then options+=(-dict="$dir/fuzz.dict"); fi
    if [ "$seconds" -eq 0 ]; then
        count=$(find "$dir/corpus" -type f | wc -l)
        if "$binary" "${options[@]}" -runs=0 "$dir/corpus" >"$out/last-run.log" 2>&1; then
            echo "fuzz: $name: $count corpus inputs ran clean"
        else
            echo "fuzz: $name: FAILED over its corpus (log: $out/last-run.log)" >&2
            tail -n 30 "$out/last-run.log" >&2
            failed+=("$name")
        fi
    else
        mkdir -p "$out/corpus"
        echo "fuzz: $name: exploring for ${seconds}s (new inputs in $out/corpus)"
        if "$binary" "${options[@]}" -max_total_time="$seconds" -timeout=10 "$out/corpus" "$dir/corpus" \
            >"$out/last-run.log" 2>&1; then
            echo "fuzz: $name: $(grep -Eo '^#[0-9]+' "$out/last-run.log" | tail -n 1 | tr -d '#') runs, no crash"
        else
            echo "fuzz: $name: CRASH (input and log in $out/)" >&2
            tail -n 30 "$out/last-run.log" >&2
            failed+=("$name")
        fi
    fi
done

if [ ${#failed[@]} -gt 0 ]; then
    echo "fuzz: failing targets: ${failed[*]}" >&2
    exit 1
fi
