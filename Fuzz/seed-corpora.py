#!/usr/bin/env python3
"""Writes the seed corpora of the fuzz targets in Fuzz/<name>/corpus/ (valid encodings, limits, near misses).

Run from the repository root: `python3 Fuzz/seed-corpora.py`. Session inputs come from
Vectors/session_golden.json; Merkle and chain values from the independent Python generator in
Tests/Interop/peers; certificates and keys from the openssl command line (made fresh each run, so
regenerating changes those files). Each input of a selector target starts with its selector byte.
"""
import base64
import hashlib
import json
import os
import shutil
import struct
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "Tests", "Interop", "peers"))
import gen_integrity_vectors as iv  # noqa: E402


def write(target, name, data):
    folder = os.path.join(ROOT, "Fuzz", target, "corpus")
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, name), "wb") as f:
        f.write(data if isinstance(data, bytes) else data.encode())


def compact(value):
    return json.dumps(value, sort_keys=True, separators=(",", ":"))


def base32(data):
    return base64.b32encode(data).decode().lower().rstrip("=")


def cid(digest):
    return "b" + base32(bytes([0x01, 0x55, 0x12, 0x20]) + digest)


def session():
    golden = json.load(open(os.path.join(ROOT, "Vectors", "session_golden.json")))
    hs = {h["name"]: h for h in golden["handshakes"]}
    for name in ("connect_small_accept", "reconnect_largest_accept"):
        h = hs[name]
        write("session-handshake", f"message1-{name}", b"\x00" + bytes.fromhex(h["message1"]))
        write("session-handshake", f"message2-{name}", b"\x01" + bytes.fromhex(h["message2"]))
        write("session-handshake", f"hello-{name}", b"\x02" + bytes.fromhex(h["hello"]))
    for name in ("connect_small_accept", "reconnect_largest_accept", "refused_stale", "refused_too_new",
                 "refused_pair_again", "refused_session_busy", "refused_tombstone", "unparseable_accept_trailing_byte"):
        write("session-handshake", f"payload-{name}", b"\x03" + bytes.fromhex(hs[name]["payload"]))
    selectors = {"message1": 0, "message2": 1, "hello": 2}
    seen = set()
    for reject in golden["rejects"]:
        parser = reject["parser"]
        if parser in seen:
            continue
        seen.add(parser)
        body = bytes.fromhex(reject["hex"])
        slug = parser + "-" + "".join(c if c.isalnum() else "-" for c in reject["why"])
        if parser in selectors:
            write("session-handshake", "reject-" + slug, bytes([selectors[parser]]) + body)
        elif parser in ("message2_payload", "accept", "stale", "too_new", "pair_again", "session_busy", "tombstone"):
            write("session-handshake", "reject-" + slug, b"\x03" + body)
        elif parser == "record_header":
            write("session-record", "reject-" + slug, b"\x00" + body)
        elif parser == "slot_status":
            write("session-record", "reject-" + slug, b"\x02" + body)
        elif parser == "counts_answer":
            write("session-record", "reject-" + slug, b"\x03" + body)
        else:
            types = {"confirm": 0x40, "bye": 0x41, "counts_query": 0x42, "keep_alive": 0x45}
            write("session-record", "reject-" + slug, bytes([1, types[parser]]) + body)
    records = hs["reconnect_largest_accept"]["records"]
    write("session-record", "header-genuine", b"\x00" + bytes.fromhex(records[2]["datagram"])[:20])
    key_a, key_b = bytes(range(16)), bytes(range(1, 17))
    slots = bytes([2]) + key_a + b"\x01" + key_b + b"\x02"
    write("session-record", "slot-status-two", b"\x02" + slots)
    write("session-record", "control-confirm", b"\x01\x40")
    write("session-record", "control-bye", b"\x01\x41\x01")
    write("session-record", "control-counts-query", b"\x01\x42\x00\x00\x00\x07")
    answer = struct.pack(">IQQQQQ", 7, 1, 2, 3, 4, 5)
    write("session-record", "control-counts-answer", b"\x01\x43" + answer)
    write("session-record", "control-slot-status", b"\x01\x44" + slots)
    write("session-record", "control-keep-alive", b"\x01\x45")
    write("session-record", "control-unknown", b"\x01\x46\x00")
    write("session-record", "application", b"\x01\x01hello")
    write("session-record", "counts-answer", b"\x03" + answer)


def record_open():
    def genuine(*counters):
        return b"".join(bytes([0]) + struct.pack(">H", c) for c in counters)

    write("record-open", "in-order", genuine(*range(12)))
    write("record-open", "replays", genuine(0, 1, 1, 0, 5, 3, 3, 2))
    # 4,199 then 103 (4,096 below: refused) and 104 (4,095 below: accepted).
    write("record-open", "window-edge", genuine(4199, 103, 104, 4198, 104))
    write("record-open", "jump-past-window", genuine(3, 4100, 3, 5, 4099))
    write("record-open", "damaged", b"\x01\x00\x02\x05\x80" + b"\x01\x00\x02\x17\x01" + b"\x01\x00\x02\x20\xff" + genuine(2))
    write("record-open", "truncated-extended", b"\x02\x00\x03\x00" + b"\x02\x00\x03\x90\x01\x02" + genuine(3))
    header = struct.pack(">BBBBQQ", 3, 3, 0, 1, 0x0102030405060708, 9)
    write("record-open", "raw-forged", b"\x03\x00\x00" + bytes([36]) + header + bytes(16) + genuine(9))


def handshake():
    # Script bytes: message 1 operation, then message 2 operations (0 genuine, 1 flip, 2 cut/extend, 3 raw).
    write("handshake", "genuine", b"\x00\x00")
    write("handshake", "damaged-then-genuine", b"\x00\x01\x05\x01\x00")
    write("handshake", "damaged-both-then-genuine-twice", b"\x01\x30\x80\x02\x10\x03\x04abcd\x00\x00")
    write("handshake", "truncated-attempt-id-genuine", b"\x02\x05\x02\x90\x01\x01\x09\x02\x00")


def integrity():
    n, chunk_size, file_size = 3, 4, 10
    hashes = [iv.chunk_hash(i) for i in range(n)]
    leaves = [iv.leaf(i, h) for i, h in enumerate(hashes)]
    root = iv.root_recursive(leaves)
    root = root[0] if isinstance(root, tuple) else root
    session_id = "session-7"
    stride = iv.stride(n)
    head = genesis = hashlib.sha256(b"Aether3D_CC_GENESIS_" + session_id.encode()).digest()
    for h in hashes:
        head = hashlib.sha256(b"CCv1\x00" + h + head).digest()
    file_sha = hashlib.sha256(b"ten bytes!").digest()
    manifest = {
        "chainHead": head.hex(), "chainSessionID": session_id, "chunkSize": chunk_size, "chunking": "fixed",
        "chunks": [{"crc32c": "0000abcd", "length": min(chunk_size, file_size - i * chunk_size), "sha256": h.hex()}
                   for i, h in enumerate(hashes)],
        "cid": cid(file_sha), "fileSHA256": file_sha.hex(), "fileSize": file_size, "formatVersion": 1,
        "merkleRoot": root.hex(),
    }
    write("manifest", "valid-3-chunks", compact(manifest))
    write("manifest", "valid-pretty", json.dumps(manifest, sort_keys=True, indent=1))
    write("manifest", "wrong-root", compact(dict(manifest, merkleRoot="00" * 32)))
    write("manifest", "extra-field", compact(dict(manifest, extra=1)))
    write("manifest", "fastcdc", compact(dict(manifest, chunking="fastcdc")))
    empty = dict(manifest, fileSize=0, chunks=[], merkleRoot=hashlib.sha256(b"").hexdigest(), chainHead=genesis.hex())
    write("manifest", "empty-file", compact(empty))

    vectors = json.load(open(os.path.join(ROOT, "Vectors", "merkle.json")))["cases"]
    case = next(c for c in vectors if c["leafCount"] == 5 or c["leafCount"] > 4)
    for p in case["proofs"][:2]:
        siblings = p["siblings"]
        binary = b"AMP1" + struct.pack("<QQB", p["leafIndex"], case["leafCount"], len(siblings))
        binary += b"".join(bytes.fromhex(s) for s in siblings)
        write("merkle-proof", f"binary-{p['leafIndex']}-of-{case['leafCount']}", b"\x00" + binary)
        doc = {"leafCount": case["leafCount"], "leafIndex": p["leafIndex"], "siblings": siblings}
        write("merkle-proof", f"json-{p['leafIndex']}-of-{case['leafCount']}", b"\x01" + compact(doc).encode())
    write("merkle-proof", "binary-single-leaf", b"\x00AMP1" + struct.pack("<QQB", 0, 1, 0))
    write("merkle-proof", "binary-max-count", b"\x00AMP1" + struct.pack("<QQB", (1 << 32) - 1, 1 << 32, 32) + bytes(32 * 32))
    write("merkle-proof", "binary-bad-magic", b"\x00AMP2" + struct.pack("<QQB", 0, 1, 0))
    write("merkle-proof", "json-extra-field", b'\x01{"leafCount":1,"leafIndex":0,"siblings":[],"x":0}')

    digest = hashlib.sha256(b"").digest()
    write("identifiers", "cid", cid(digest))
    write("identifiers", "cid-binary", bytes([1, 0x55, 0x12, 0x20]) + digest)
    write("identifiers", "cid-uppercase", "B" + base32(bytes([1, 0x55, 0x12, 0x20]) + digest).upper())
    write("identifiers", "aci", "aci:1:sha256:" + digest.hex())
    write("identifiers", "aci-version-2", "aci:2:sha256:" + digest.hex())
    write("identifiers", "digest-hex", digest.hex())
    write("identifiers", "chunking-fixed", "fixed")
    write("identifiers", "chunking-fastcdc", "fastcdc")

    chains = json.load(open(os.path.join(ROOT, "Vectors", "commitment_chain.json")))["cases"]
    chain = next(c for c in chains if c["chunkCount"] == 5 or c["chunkCount"] > 4)
    chain_doc = {"count": chain["chunkCount"], "head": chain["head"], "jumpLinks": chain["jumpLinks"],
                 "sessionID": chain["sessionID"], "stride": chain["stride"]}
    merkle = next(c for c in vectors if c["leafCount"] == chain["chunkCount"])
    merkle_doc = {"leafCount": merkle["leafCount"], "nodes": merkle["checkpointNodes"]}
    write("checkpoint", "ledger", b"\x00" + compact({"chain": chain_doc, "merkle": merkle_doc}).encode())
    write("checkpoint", "chain", b"\x01" + compact(chain_doc).encode())
    write("checkpoint", "merkle", b"\x02" + compact(merkle_doc).encode())
    empty_chain = {"count": 0, "head": chains[0]["genesis"], "jumpLinks": [], "sessionID": chains[0]["sessionID"],
                   "stride": 1}
    write("checkpoint", "chain-empty", b"\x01" + compact(empty_chain).encode())
    write("checkpoint", "merkle-full", b"\x02" + compact({"leafCount": 1 << 32, "nodes": ["00" * 32]}).encode())
    huge = {"count": (1 << 63) - 1, "head": "11" * 32, "jumpLinks": ["22" * 32], "sessionID": "s",
            "stride": (1 << 63) - 1}
    write("checkpoint", "chain-count-int-max", b"\x01" + compact(huge).encode())


def coding():
    digests = [hashlib.sha256(bytes([i])).hexdigest() for i in range(3)]
    index = {"dataShards": 2, "field": "gf256", "fileSize": 10, "format": "aether-ec/1", "parityShards": 1,
             "shardSHA256": digests, "shardSize": 5}
    write("shard-index", "gf256", compact(index) + "\n")
    write("shard-index", "gf65536", compact(dict(index, field="gf65536", shardSize=6)))
    write("shard-index", "wrong-shard-size", compact(dict(index, shardSize=4)))
    write("shard-index", "missing-digest", compact(dict(index, shardSHA256=digests[:2])))
    write("shard-index", "negative-size", compact(dict(index, fileSize=-1)))
    v2 = dict(index, format="aether-ec/2", fileSHA256=hashlib.sha256(b"0123456789").hexdigest())
    write("shard-index", "v2-with-file-digest", compact(v2))
    write("shard-index", "v2-without-file-digest", compact(dict(index, format="aether-ec/2")))
    write("shard-index", "v1-with-file-digest", compact(dict(v2, format="aether-ec/1")))


def pins_and_certificates():
    pin_a = base64.b64encode(hashlib.sha256(b"a").digest()).decode()
    pin_b = base64.b64encode(hashlib.sha256(b"b").digest()).decode()
    update = {"version": 1, "newCAPins": [pin_a, pin_b], "effectiveDate": 1764460800, "expiryDate": 1767139200,
              "signingKeyId": hashlib.sha256(b"key").hexdigest(), "signature": base64.b64encode(bytes(512)).decode()}
    write("pin-update", "valid", b"\x00" + compact(update).encode())
    write("pin-update", "duplicate-pins", b"\x00" + compact(dict(update, newCAPins=[pin_a, pin_a])).encode())
    write("pin-update", "expiry-before", b"\x00" + compact(dict(update, expiryDate=1)).encode())
    write("pin-update", "pin", b"\x01" + pin_a.encode())
    write("pin-update", "pin-unpadded", b"\x01" + pin_a.rstrip("=").encode())

    openssl = shutil.which("openssl")
    if not openssl:
        print("seed-corpora: openssl not found, certificate corpus skipped", file=sys.stderr)
        return
    with tempfile.TemporaryDirectory() as tmp:
        def run(*args):
            subprocess.run([openssl, *args], cwd=tmp, check=True, capture_output=True)

        run("req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout", "ec.key",
            "-out", "ec.pem", "-subj", "/CN=fuzz", "-days", "1")
        run("x509", "-in", "ec.pem", "-outform", "DER", "-out", "ec.der")
        run("genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:4096", "-out", "rsa.key")
        run("pkey", "-in", "rsa.key", "-pubout", "-out", "rsa.pub")
        run("pkey", "-in", "ec.key", "-pubout", "-out", "ec.pub")
        read = lambda name: open(os.path.join(tmp, name), "rb").read()  # noqa: E731
        der, pem, rsa_pub, ec_pub = read("ec.der"), read("ec.pem"), read("rsa.pub"), read("ec.pub")
    write("certificate", "der", b"\x00" + der)
    write("certificate", "der-trailing-byte", b"\x00" + der + b"\x00")
    write("certificate", "pem", b"\x01" + pem)
    write("certificate", "pem-two", b"\x01" + pem + pem)
    write("certificate", "pem-damaged", b"\x01" + pem[:100] + pem[120:])
    write("certificate", "key-rsa-4096", b"\x02" + rsa_pub)
    write("certificate", "key-ec", b"\x02" + ec_pub)


def possession():
    uuid = bytearray(hashlib.sha256(b"uuid").digest()[:16])
    uuid[6] = 0x70 | (uuid[6] & 0x0F)
    uuid[8] = 0x80 | (uuid[8] & 0x3F)
    uuid = bytes(uuid)
    key = hashlib.sha256(b"key").digest()
    items = b"\x01" + b"\x02" + struct.pack(">QI", 4096, 512) + b"\x03" + struct.pack(">I", 2)
    write("possession", "challenge", b"\x00APC1" + uuid + key + b"\x03" + items)
    write("possession", "challenge-no-items", b"\x00APC1" + uuid + key + b"\x00")
    write("possession", "challenge-unknown-item", b"\x00APC1" + uuid + key + b"\x01\x04")
    write("possession", "response", b"\x01APS1" + uuid + key + bytes(28))
    write("possession", "response-short", b"\x01APS1" + uuid + key + bytes(27))
    write("possession", "uuid", b"\x02" + uuid)
    write("possession", "uuid-v4", b"\x02" + uuid[:6] + bytes([0x40]) + uuid[7:])


def transport():
    for name, text in [("loopback", "127.0.0.1:8080"), ("localhost", "localhost:9"), ("port-zero", "10.0.0.1:0"),
                       ("port-max", "255.255.255.255:65535"), ("port-too-big", "1.2.3.4:65536"),
                       ("leading-zero-octet", "01.2.3.4:80"), ("port-leading-zero", "1.2.3.4:080"),
                       ("ipv6", "[::1]:80"), ("hostname", "example.com:80"), ("port-plus-sign", "1.2.3.4:+80"),
                       ("embedded-nul", "1.2.3.4\0junk:80")]:
        write("udp-address", name, text)


def netlink():
    def message(kind, body):
        return struct.pack("<IHHII", 16 + len(body), kind, 0, 1, 0) + body

    def attribute(kind, data):
        raw = struct.pack("<HH", 4 + len(data), kind) + data
        return raw + bytes((-len(raw)) % 4)

    link = (struct.pack("<BBHiII", 0, 0, 1, 3, 0x41, 0) + attribute(3, b"wlan0\x00")
            + attribute(18, attribute(1, b"wireguard\x00")))
    route = (struct.pack("<BBBBBBBBI", 2, 24, 0, 0, 254, 4, 0, 1, 0) + attribute(1, bytes([192, 168, 1, 0]))
             + attribute(5, bytes([192, 168, 1, 1])) + attribute(4, struct.pack("<i", 3))
             + attribute(15, struct.pack("<I", 254)))
    write("netlink", "new-link", message(16, link))
    write("netlink", "del-link", message(17, link))
    write("netlink", "new-route", message(24, route))
    write("netlink", "two-and-done", message(24, route) + message(16, link) + message(3, bytes(4)))
    write("netlink", "overrun-attribute", message(16, struct.pack("<BBHiII", 0, 0, 1, 3, 1, 0) + struct.pack("<HH", 200, 3)))
    write("netlink", "overrun-message", struct.pack("<IHHII", 400, 16, 0, 1, 0))


def traces():
    def npy(header, values, fmt):
        h = header.encode()
        h += b" " * (64 - (10 + len(h) + 1) % 64) + b"\n"
        return b"\x93NUMPY\x01\x00" + struct.pack("<H", len(h)) + h + b"".join(struct.pack(fmt, v) for v in values)

    write("trace", "pensieve", b"\x00" + b"0.0\t1.5\n0.8\t2.0\n1.9\t0.0\n")
    write("trace", "lumos", b"\x00" + b"1 10.5\n2 11\n3 9.25\n")
    write("trace", "times-overflow", b"\x00" + b"-1e308 1\n1e308 1\n")
    write("trace", "sabre", b"\x01" + b'[{"duration_ms": 1000, "bandwidth_kbps": 5000, "latency_ms": 20}, '
          b'{"duration_ms": 500, "bandwidth_kbps": 0, "latency_ms": 20}]')
    write("trace", "sabre-infinite", b"\x01" + b'[{"duration_ms": inf, "bandwidth_kbps": 5000}]')
    write("trace", "gophers", b"\x02" + b"protocol,carrier,seq_num,throughput_mbps\ntcp,a,1,100.5\ntcp,a,0,90\nudp,b,0,10\n")
    write("trace", "npy-f8", b"\x03" + npy("{'descr': '<f8', 'fortran_order': False, 'shape': (3,), }", [1.0, 2.5, 0.0], "<d"))
    write("trace", "npy-i8", b"\x03" + npy("{'descr': '<i8', 'fortran_order': False, 'shape': (2,), }", [5, 7], "<q"))
    write("trace", "npy-shape-mismatch",
          b"\x03" + npy("{'descr': '<f8', 'fortran_order': False, 'shape': (4,), }", [1.0], "<d"))


def crc32c(data):
    crc = 0xFFFFFFFF
    for byte in data:
        crc ^= byte
        for _ in range(8):
            crc = (crc >> 1) ^ (0x82F63B78 if crc & 1 else 0)
    return crc ^ 0xFFFFFFFF


def sf_bytes(data):
    return ":" + base64.b64encode(data).decode() + ":"


def receiver():
    """The receiver's targets: native documents and fields, tus/IETF fields, content decoders, request scripts
    (docs/PROTOCOL.md sections 2-7, docs/RECEIVER.md)."""
    body = b"hello"
    h = hashlib.sha256(body).digest()
    session_id = "s"
    genesis = hashlib.sha256(b"Aether3D_CC_GENESIS_" + session_id.encode()).digest()
    link = hashlib.sha256(b"CCv1\x00" + h + genesis).digest()
    root = iv.root_recursive([iv.leaf(0, h)])
    root = root[0] if isinstance(root, tuple) else root
    upload_id = base32(bytes(range(16)))
    nonce = base64.b64encode(bytes(range(32))).decode()
    chunk_field = f"length=5, crc32c={sf_bytes(struct.pack('>I', crc32c(body)))}, sha-256={sf_bytes(h)}"
    capabilities = ("v=1, min-chunk=262144, max-chunk=67108864, max-object=1099511627776, max-chunks=1048576, "
                    'parallel=16, parity="rs8", encodings="zstd deflate", possession, challenges, expires=86400')

    docs = {
        "create-minimal": (0, {"chainSessionID": session_id, "chunkSize": 16384, "chunks": 1, "size": 5}),
        "create-parity-aci": (0, {"chainSessionID": "session-7", "chunkSize": 4194304, "chunks": 256,
                                  "contentID": "aci:1:sha256:" + h.hex(),
                                  "parity": {"code": "rs8", "data": 10, "parity": 2}, "size": 1073741824}),
        "create-empty": (0, {"chainSessionID": session_id, "chunkSize": 16384, "chunks": 1, "size": 0}),
        "status-open": (1, {"chainVerifiedThrough": -1, "chunkSize": 262144, "chunks": 10,
                            "expires": "2026-12-01T12:00:00Z", "id": upload_id, "parity": None, "possession": None,
                            "received": "CQI=", "size": 2621440, "state": "open"}),
        "status-parity": (1, {"chainVerifiedThrough": 9, "chunkSize": 262144, "chunks": 10,
                              "expires": "2026-12-01T12:00:00Z", "id": upload_id,
                              "parity": {"code": "rs8", "data": 10, "parity": 2, "received": "Aw=="},
                              "possession": {"challenge": "AQID"}, "received": "/wM=", "size": 2621440,
                              "state": "complete"}),
        "complete": (2, {"chainHead": link.hex(), "fileSHA256": h.hex(), "merkleRoot": root.hex()}),
        "challenge": (3, {"indices": [3, 17, 250], "nonce": nonce}),
        "challenge-answer-null": (4, {"answers": [{"index": 3, "proof": None, "sha256": None}], "nonce": nonce}),
        "challenge-answer-proof": (4, {"answers": [{"index": 0, "proof": {"leafCount": 1, "leafIndex": 0,
                                                                          "siblings": []}, "sha256": h.hex()}],
                                       "nonce": nonce}),
        "receipt": (5, {"chainHead": link.hex(), "chunks": 1, "cid": cid(h), "completedAt": "2026-11-30T16:00:00Z",
                        "fileSHA256": h.hex(), "id": upload_id, "merkleRoot": root.hex(), "size": 5}),
        "problem": (6, {"chunk": 3, "detail": "chunk 3 is stored with other bytes", "status": 409,
                        "title": "Chunk stored with other bytes", "type": "urn:aether:problem:duplicate-chunk"}),
        "problem-offset": (6, {"detail": "the offset is 10", "expected": 4, "offset": 10, "status": 409,
                               "title": "Offset mismatch", "type": "urn:aether:problem:offset-mismatch"}),
    }
    for name, (selector, value) in docs.items():
        write("native-documents", name, bytes([selector]) + compact(value).encode())
    write("native-documents", "status-bits-past-count", b"\x01" + compact(dict(docs["status-open"][1], received="CQY=")).encode())
    write("native-documents", "create-chunks-disagree", b"\x00" + compact(dict(docs["create-minimal"][1], chunks=2)).encode())
    fields = {
        "chunk": (7, chunk_field), "chunk-link": (7, chunk_field + f", link={sf_bytes(link)}"),
        "chunk-unknown-member": (7, chunk_field + ", extra=1"), "receipt": (8, f"index=5, sha-256={sf_bytes(h)}"),
        "receipt-parity": (8, f"index=12, sha-256={sf_bytes(h)}, parity"), "received": (9, "chunks=10, prefix=4"),
        "received-inconsistent": (9, "chunks=3, prefix=4"), "capabilities": (10, capabilities),
        "capabilities-false": (10, capabilities.replace("possession, challenges", "possession=?0, challenges=?0")),
        "capabilities-min-above-max": (10, capabilities.replace("min-chunk=262144", "min-chunk=99999999999")),
    }
    for name, (selector, text) in fields.items():
        write("native-documents", name, bytes([selector]) + text.encode())

    tus_ietf = {
        "metadata": (0, 0, "filename d29ybGRfZG9taW5hdGlvbl9wbGFuLnBkZg==,is_confidential"),
        "metadata-empty": (0, 0, ""), "metadata-repeated-key": (0, 0, "a YQ==,a Yg=="),
        "metadata-traversal": (0, 0, "filename Li4vLi4vZXRjL3Bhc3N3ZA=="),
        "metadata-long-key": (0, 0, "k" * 300 + " YQ=="),
        "checksum-sha1": (1, 0, "sha1 Kq5sNclPz7QV2+lfQIuc6R7oRu0="),
        "checksum-sha256": (1, 0, "sha256 " + base64.b64encode(h).decode()),
        "checksum-crc32": (1, 0, "crc32 NhCmhg=="), "checksum-unknown": (1, 0, "md5 XUFAKrxLKna5cZ2REBfFkg=="),
        "concat-partial": (2, 0, "partial"), "concat-final": (2, 0, f"final;/uploads/{upload_id} https://h/uploads/{upload_id}"),
        "concat-traversal": (2, 0, "final;/uploads/../../etc/passwd"),
        "limit-latest": (3, 0, "max-size=1099511627776, max-age=86400"),
        "limit-draft05": (3, 1, "max-size=1099511627776, expires=86400, min-append-size=16384"),
        "limit-negative": (3, 0, "max-size=-1"),
        "repr-digest": (4, 0, f"sha-256={sf_bytes(h)}, sha-512=:AAAA:"),
        "content-digest-short": (4, 1, "sha-256=:AAAA:"),
        "offset": (5, 0, "1024"), "length": (5, 1, "0"), "complete": (5, 2, "?1"), "version": (5, 3, "6"),
        "version-other": (5, 3, "7"), "offset-params": (5, 0, "5;a=1"),
        "tus-integer": (6, 0, "000123"), "tus-integer-repeated": (6, 1, "5"),
    }
    for name, (selector, variant, text) in tus_ietf.items():
        write("tus-ietf-fields", name, bytes([selector, variant]) + text.encode())

    plain = b"aether " * 40
    zstd = subprocess.run(["zstd", "-q", "-c"], input=plain, capture_output=True, check=True).stdout
    import zlib
    deflate = zlib.compress(plain)
    limit = struct.pack(">H", len(plain))
    write("content-decoders", "zstd", b"\x00" + limit + b"\x10" + zstd)
    write("content-decoders", "zstd-over-limit", b"\x00" + struct.pack(">H", 100) + b"\xff" + zstd)
    write("content-decoders", "zstd-truncated", b"\x00" + limit + b"\x03" + zstd[:-3])
    write("content-decoders", "deflate", b"\x01" + limit + b"\x07" + deflate)
    write("content-decoders", "deflate-over-limit", b"\x01" + struct.pack(">H", 10) + b"\x40" + deflate)
    write("content-decoders", "deflate-trailing", b"\x01" + limit + b"\x40" + deflate + b"xx")
    write("content-decoders", "zstd-skippable-frame", b"\x00" + limit + b"\x40" + b"\x50\x2a\x4d\x18\x02\x00\x00\x00ab" + zstd)
    write("content-decoders", "roundtrip-zstd", b"\x02" + limit + b"\x05" + plain)
    write("content-decoders", "roundtrip-deflate-over", b"\x03" + struct.pack(">H", 9) + b"\x05" + plain)

    def script(*requests):
        return "\n~~~\n".join(requests).encode()

    native_create = ("POST /uploads\nAether-Protocol: 1\nContent-Type: application/aether-upload+json\n"
                     "Content-Length: {n}\n\n{body}")
    create_body = compact(docs["create-minimal"][1])
    chunk = (f"PUT /uploads/$ID/chunks/0\nAether-Protocol: 1\nAether-Chunk: {chunk_field}, link={sf_bytes(link)}\n"
             f"Content-Digest: sha-256={sf_bytes(h)}\nContent-Length: 5\n\nhello")
    complete_body = compact(docs["complete"][1])
    challenge_body = compact({"indices": [0], "nonce": nonce})
    zstd_hello = subprocess.run(["zstd", "-q", "-c"], input=body, capture_output=True, check=True).stdout
    scripts = {
        "native-flow": script(
            native_create.format(n=len(create_body), body=create_body), chunk, chunk, "HEAD /uploads/$ID\n",
            "GET /uploads/$ID\n",
            f"POST /uploads/$ID/complete\nAether-Protocol: 1\nContent-Type: application/aether-complete+json\n"
            f"Content-Length: {len(complete_body)}\n\n{complete_body}",
            f"POST /uploads/$ID/challenges\nAether-Protocol: 1\nContent-Type: application/aether-challenge+json\n"
            f"Content-Length: {len(challenge_body)}\n\n{challenge_body}",
            "DELETE /uploads/$ID\nAether-Protocol: 1\n"),
        "native-parity": script(
            native_create.format(n=0, body=compact(dict(docs["create-minimal"][1],
                                                        parity={"code": "rs8", "data": 1, "parity": 1}))),
            f"PUT /uploads/$ID/parity/0/0 split\nAether-Protocol: 1\nAether-Chunk: length=16384, "
            f"crc32c=:AAAAAA==:, sha-256={sf_bytes(h)}\nContent-Length: 5\n\nhello"),
        "native-zstd-chunk": script(
            native_create.format(n=len(create_body), body=create_body),
            f"PUT /uploads/$ID/chunks/0\nAether-Protocol: 1\nAether-Chunk: {chunk_field}\nContent-Encoding: zstd\n"
            f"Content-Length: {len(zstd_hello)}\n\nZSTD"),
        "tus-flow": script(
            "POST /uploads\nTus-Resumable: 1.0.0\nUpload-Length: 10\n"
            "Upload-Metadata: filename d29ybGQudHh0,is_confidential\n",
            "HEAD /uploads/$ID\nTus-Resumable: 1.0.0\n",
            "PATCH /uploads/$ID split\nTus-Resumable: 1.0.0\nUpload-Offset: 0\n"
            "Content-Type: application/offset+octet-stream\nUpload-Checksum: sha256 "
            + base64.b64encode(h).decode() + "\nContent-Length: 5\n\nhello",
            "PATCH /uploads/$ID\nTus-Resumable: 1.0.0\nUpload-Offset: 5\n"
            "Content-Type: application/offset+octet-stream\nContent-Length: 5\n\nworld",
            "POST /uploads/$ID\nX-HTTP-Method-Override: DELETE\nTus-Resumable: 1.0.0\n"),
        "tus-concat": script(
            "POST /uploads\nTus-Resumable: 1.0.0\nUpload-Length: 5\nUpload-Concat: partial\n"
            "Content-Type: application/offset+octet-stream\nContent-Length: 5\n\nhello",
            "POST /uploads\nTus-Resumable: 1.0.0\nUpload-Length: 5\nUpload-Concat: partial\n"
            "Content-Type: application/offset+octet-stream\nContent-Length: 5\n\nworld",
            "POST /uploads\nTus-Resumable: 1.0.0\nUpload-Concat: final;/uploads/$PREV /uploads/$ID\n",
            "HEAD /uploads/$ID\nTus-Resumable: 1.0.0\n"),
        "tus-defer-cut": script(
            "POST /uploads\nTus-Resumable: 1.0.0\nUpload-Defer-Length: 1\n",
            "PATCH /uploads/$ID cut\nTus-Resumable: 1.0.0\nUpload-Offset: 0\n"
            "Content-Type: application/offset+octet-stream\nContent-Length: 5\n\nhello",
            "PATCH /uploads/$ID\nTus-Resumable: 1.0.0\nUpload-Offset: 0\nUpload-Length: 3\n"
            "Content-Type: application/offset+octet-stream\nContent-Length: 5\n\nhello",
            "@advance 700", "@expire", "HEAD /uploads/$ID\nTus-Resumable: 1.0.0\n"),
        "ietf-latest": script(
            "POST /uploads\nUpload-Draft-Interop-Version: 8\nUpload-Complete: ?0\nUpload-Length: 10\n"
            f"Repr-Digest: sha-256={sf_bytes(hashlib.sha256(b'helloworld').digest())}\nContent-Length: 5\n\nhello",
            "HEAD /uploads/$ID\nUpload-Draft-Interop-Version: 8\n",
            "PATCH /uploads/$ID\nUpload-Draft-Interop-Version: 8\nUpload-Offset: 5\nUpload-Complete: ?1\n"
            "Content-Type: application/partial-upload\nContent-Length: 5\n\nworld",
            "OPTIONS /uploads\n"),
        "ietf-draft05": script(
            "POST /uploads\nUpload-Draft-Interop-Version: 6\nUpload-Complete: ?1\n"
            f"Content-Digest: sha-256={sf_bytes(h)}\nContent-Length: 5\n\nhello",
            "PATCH /uploads/$ID\nUpload-Draft-Interop-Version: 6\nUpload-Offset: 99\nUpload-Complete: ?1\n\n"),
        "bad-paths": script(
            "GET /uploads/../../etc/passwd\n", "GET /uploads/%2e%2e/x\n", "PUT /uploads/$ID/chunks/007\n",
            "PUT /uploads/$ID/chunks/-1\n", "GET uploads\n", "GET /healthz\n", "GET /metrics remote\n",
            "BREW /uploads\n", "POST /uploads\nX-HTTP-Method-Override: TRACE\n", "POST /uploads remote\n"),
        "bad-headers": script(
            "POST /uploads\nAether-Protocol: 2\n", "POST /uploads\n",
            "POST /uploads\nTus-Resumable: 0.2.2\nUpload-Length: 5\n",
            "POST /uploads\nTus-Resumable: 1.0.0\nUpload-Length: 99999999999999999999\n",
            "POST /uploads\nTus-Resumable: 1.0.0\nUpload-Length: 5\nUpload-Length: 6\n",
            "POST /uploads\nUpload-Complete: maybe\n",
            "POST /uploads\nUpload-Complete: ?0\nUpload-Offset: -5\nUpload-Length: -1\n",
            "POST /uploads\nAether-Protocol: 1\nContent-Type: text/plain\nContent-Length: 2\n\n{}"),
    }
    for name, data in scripts.items():
        if name == "native-zstd-chunk":
            data = data.replace(b"ZSTD", zstd_hello)
        write("receiver-headers", name, data)


if __name__ == "__main__":
    if len(sys.argv) > 1:  # only the named groups, e.g. `python3 Fuzz/seed-corpora.py receiver`
        for group in sys.argv[1:]:
            globals()[group]()
        sys.exit(0)
    session()
    record_open()
    handshake()
    integrity()
    coding()
    pins_and_certificates()
    possession()
    transport()
    netlink()
    traces()
    receiver()
