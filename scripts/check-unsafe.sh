#!/usr/bin/env bash
# Unsafe containment: only `*+Unsafe.swift` files may import a CAether* C module, so every call into
# a C library's pointers sits in one file per library per module and a grep finds it.
set -euo pipefail
cd "$(dirname "$0")/.."
bad=$(grep -rlE '^\s*(@preconcurrency\s+)?((internal|public|private|fileprivate|package)\s+)?import\s+CAether' Sources Tests \
    --include='*.swift' | grep -v '+Unsafe\.swift$' || true)
if [ -n "$bad" ]; then
    echo "unsafe containment: these files import a C module but are not *+Unsafe.swift:" >&2
    echo "$bad" >&2
    exit 1
fi
# Crash-on-input constructs are not allowed in library or tool sources.
crash=$(grep -rnE 'fatalError\(|try!|[^a-zA-Z_]as! ' Sources --include='*.swift' | grep -vE '^\S+:[0-9]+:\s*//' || true)
if [ -n "$crash" ]; then
    echo "crash-on-input constructs in Sources (use a typed error):" >&2
    echo "$crash" >&2
    exit 1
fi
echo "unsafe containment: C imports only in *+Unsafe.swift files; no fatalError/try!/as! in Sources"
