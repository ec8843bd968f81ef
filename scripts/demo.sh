#!/usr/bin/env bash
# `make demo`: the main job as far as it exists, end to end on this machine with the release build.
# Every step prints what it does; any step that does not behave as shown stops the demo (exit 1).
set -euo pipefail
cd "$(dirname "$0")/.."
aether=.build/release/aether
work=$(mktemp -d -t aether-demo.XXXXXX)
host_pid=""
cleanup() {
    [ -n "$host_pid" ] && kill "$host_pid" 2>/dev/null && wait "$host_pid" 2>/dev/null
    rm -rf "$work"
}
trap cleanup EXIT
step() { printf '\n== %s\n' "$*"; }
fail() { echo "demo: $*" >&2; exit 1; }

step "1. A 96 MiB file, digested in one pass (SHA-256, CRC32C, per-chunk digests, Merkle root, chain head, CID)"
head -c $((96 * 1024 * 1024 + 12345)) /dev/urandom > "$work/scan.bin"
"$aether" digest "$work/scan.bin" --chunk-size 8M --manifest "$work/scan.manifest.json" > "$work/digest.out"
head -11 "$work/digest.out"
manifest_sha=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["fileSHA256"])' "$work/scan.manifest.json")
[ "$(sha256sum "$work/scan.bin" | cut -d' ' -f1)" = "$manifest_sha" ] || fail "manifest SHA-256 differs from sha256sum"
echo "manifest: $work/scan.manifest.json ($(wc -c < "$work/scan.manifest.json") bytes), SHA-256 agrees with sha256sum"

step "2. Verified against its manifest"
"$aether" verify "$work/scan.bin" "$work/scan.manifest.json"

step "3. A copy with one byte flipped at offset 50,000,000 is caught at its chunk"
cp "$work/scan.bin" "$work/corrupt.bin"
printf '\x5a' | dd of="$work/corrupt.bin" bs=1 seek=50000000 conv=notrunc status=none
if "$aether" verify "$work/corrupt.bin" "$work/scan.manifest.json"; then fail "corruption not detected"; fi

step "4. Erasure-coded RS(10,4); four shards lost (two deleted, two damaged); rebuilt and verified"
"$aether" ec encode --data 10 --parity 4 "$work/scan.bin" "$work/shards"
rm "$work/shards/shard-00002.bin" "$work/shards/shard-00011.bin"
printf 'damage' | dd of="$work/shards/shard-00005.bin" bs=1 seek=1000 conv=notrunc status=none
printf 'damage' | dd of="$work/shards/shard-00007.bin" bs=1 seek=9 conv=notrunc status=none
"$aether" ec decode "$work/shards" "$work/rebuilt.bin"
cmp "$work/scan.bin" "$work/rebuilt.bin" || fail "rebuilt file differs"
"$aether" verify "$work/rebuilt.bin" "$work/scan.manifest.json"

step "5. A device paired with a host; a secure session (Noise NNpsk0 over UDP) on loopback"
state="$work/state"
"$aether" session pair --host-id 00112233445566778899aabbccddeeff --state-dir "$state"
port=$(python3 -c 'import socket; s=socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
"$aether" session host --bind 127.0.0.1 --port "$port" --echo --state-dir "$state" > "$work/host.out" 2>&1 &
host_pid=$!
sleep 0.5
printf 'first sealed record\nsecond sealed record\nthird sealed record\n' |
    "$aether" session connect "127.0.0.1:$port" --state-dir "$state" --counts | tee "$work/client.out"
grep -q 'third sealed record' "$work/client.out" || fail "the echo did not come back"
kill "$host_pid" && wait "$host_pid" 2>/dev/null || true
host_pid=""
echo "host printed:"
sed 's/^/  /' "$work/host.out"

step "done: digest, manifest, verification, erasure coding and a paired secure session all behaved as shown"
