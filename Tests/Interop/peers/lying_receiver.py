"""A native (aether/1) receiver that lies, for the tests of what `aether upload` claims (issue 24).

  lying_receiver.py MODE [--answer old|forged]

Serves on 127.0.0.1 (a port the kernel picks), prints one JSON line {"url": "http://127.0.0.1:PORT"} once it
listens, and stops when stdin closes. It speaks enough of docs/PROTOCOL.md section 3 for `aether upload` to run:
OPTIONS with Aether-Capabilities (spot checks of version 2 advertised, no runs, parity, codings or possession),
create, chunk PUT with Aether-Receipt, GET and HEAD status, challenges, complete and DELETE. Written from the
document with the standard library (hashlib, hmac), not from the Swift code. MODE:

  honest        stores every chunk and answers truthfully (the control: the peer itself is right)
  hashes-only   discards every body, keeps the sha-256 of each Aether-Chunk header, answers challenges from those
                hashes (--answer old: version 1, hashes and Merkle proofs; --answer forged: version 2 with "MACs"
                over the hash, the best it can do without the bytes) and echoes the completion claim
  wrong-root    stores honestly; the receipt's merkleRoot differs
  wrong-sha256  stores honestly; the receipt's fileSHA256 (and cid) differ
  wrong-size    stores honestly; the receipt's size differs
  acks-unstored acknowledges every chunk but stores only chunk 0; status, challenges and complete then say so
  other-upload  stores honestly but answers challenges with the bytes another upload holds at that place (zeros
                when it holds no other upload)
  late-answers  stores and answers honestly, but every challenge answer comes 0.8 s late (the client's limit is
                0.5 s): three strikes
  old-receiver  stores and answers honestly, but as a receiver of before spot-check version 2: its capabilities
                say `challenges` without `challenge-v`, and a challenge gets hashes and proofs (version 1)
"""
import base64
import hashlib
import hmac
import json
import os
import secrets
import struct
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

sys.dont_write_bytecode = True  # the import below leaves no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gen_integrity_vectors import leaf, proof, root_recursive  # noqa: E402

TAG = b"aether/byzantine-challenge/v2"
MODES = {
    "honest", "hashes-only", "wrong-root", "wrong-sha256", "wrong-size", "acks-unstored", "other-upload",
    "old-receiver", "late-answers",
}
CHALLENGE_BYTES = 16 << 20
CAPABILITIES = (
    "v=1, min-chunk=16384, max-chunk=67108864, max-object=1099511627776, max-chunks=1048576, parallel=8, "
    'parity="", encodings="", possession=?0, challenges, expires=86400, challenge-v=2, '
    f"challenge-bytes={CHALLENGE_BYTES}"
)
BASE32 = "abcdefghijklmnopqrstuvwxyz234567"

mode = sys.argv[1] if len(sys.argv) > 1 else ""
answer_format = "old"
if len(sys.argv) > 3 and sys.argv[2] == "--answer" and sys.argv[3] in ("old", "forged"):
    answer_format = sys.argv[3]
if mode == "old-receiver":
    CAPABILITIES = CAPABILITIES.split(", challenge-v=")[0]
    answer_format = "old"
if mode not in MODES:
    sys.exit(f"usage: lying_receiver.py {'|'.join(sorted(MODES))} [--answer old|forged]")

lock = threading.Lock()
uploads = {}  # id -> {"size", "chunkSize", "chunks", "hashes": {i: bytes}, "data": {i: bytes}, "state", "receipt"}
order = []  # upload ids, oldest first


def upload_id() -> str:
    bits = int.from_bytes(secrets.token_bytes(16), "big") << 2  # 130 bits, the last two zero
    return "".join(BASE32[(bits >> (125 - 5 * i)) & 31] for i in range(26))


def sf_bytes(value: bytes) -> str:
    return ":" + base64.b64encode(value).decode() + ":"


def parse_members(field: str) -> dict:
    members = {}
    for part in field.split(","):
        key, _, value = part.strip().partition("=")
        if value.startswith(":") and value.endswith(":"):
            members[key] = base64.b64decode(value[1:-1])
        else:
            members[key] = value
    return members


def cid(sha256: bytes) -> str:
    raw = bytes([0x01, 0x55, 0x12, 0x20]) + sha256
    return "b" + base64.b32encode(raw).decode().lower().rstrip("=")


def bitmap(count: int, held) -> str:
    data = bytearray((count + 7) // 8)
    for index in held:
        data[index // 8] |= 1 << (index % 8)
    return base64.b64encode(bytes(data)).decode()


def chunk_length(upload, index: int) -> int:
    return min(upload["chunkSize"], upload["size"] - index * upload["chunkSize"])


def stored(upload):
    """The chunks whose bytes this receiver holds (acks-unstored acknowledged more; hashes-only holds none)."""
    if mode == "hashes-only":
        return set()
    return set(upload["data"])


def listed(upload):
    """The chunks the status document lists as held."""
    return set(upload["hashes"]) if mode == "hashes-only" else stored(upload)


def status_document(uid, upload) -> bytes:
    held = listed(upload)
    document = {
        "chainVerifiedThrough": -1,
        "chunkSize": upload["chunkSize"],
        "chunks": upload["chunks"],
        "expires": "2099-01-01T00:00:00Z",
        "id": uid,
        "parity": None,
        "possession": None,
        "received": bitmap(upload["chunks"], held),
        "size": upload["size"],
        "state": upload["state"],
    }
    return json.dumps(document, separators=(",", ":"), sort_keys=True).encode()


def merkle_proof(hashes, index):
    leaves = [leaf(i, h) for i, h in enumerate(hashes)]
    return {"leafCount": len(hashes), "leafIndex": index, "siblings": proof(leaves, index)}


def mac(nonce: bytes, uid: str, index: int, offset: int, data: bytes) -> str:
    ident = uid.encode()
    message = bytes([len(TAG)]) + TAG + bytes([len(ident)]) + ident
    message += struct.pack(">QQQ", index, offset, len(data)) + data
    return hmac.new(nonce, message, hashlib.sha256).hexdigest()


def other_bytes(uid, index, offset, length) -> bytes:
    for other in reversed(order):
        if other != uid and index in uploads[other]["data"]:
            data = uploads[other]["data"][index][offset : offset + length]
            return data + bytes(length - len(data))
    return bytes(length)


def challenge_answer(uid, upload, body) -> bytes:
    request = json.loads(body)
    nonce = base64.b64decode(request["nonce"])
    items = request.get("items") or [{"index": i, "offset": 0, "length": 0} for i in request.get("indices", [])]
    hashes = upload["hashes"]
    complete_hashes = [hashes[i] for i in range(upload["chunks"])] if len(hashes) == upload["chunks"] else None
    answers = []
    for item in items:
        index, offset, length = item["index"], item["offset"], item["length"]
        held = index in (hashes if mode == "hashes-only" else stored(upload))
        sha = hashes[index].hex() if held else None
        proof_document = merkle_proof(complete_hashes, index) if held and complete_hashes else None
        if mode in ("hashes-only", "old-receiver") and answer_format == "old":
            answers.append({"index": index, "proof": proof_document, "sha256": sha})
            continue
        if not held:
            value = None
        elif mode == "hashes-only":
            value = mac(nonce, uid, index, offset, hashes[index])  # all it has: the hash, not the bytes
        elif mode == "other-upload":
            value = mac(nonce, uid, index, offset, other_bytes(uid, index, offset, length))
        else:
            value = mac(nonce, uid, index, offset, upload["data"][index][offset : offset + length])
        answers.append(
            {
                "index": index,
                "length": length,
                "mac": value,
                "offset": offset,
                "proof": proof_document,
                "sha256": sha,
            }
        )
    document = {"answers": answers, "nonce": request["nonce"]}
    if answer_format != "old" or mode not in ("hashes-only", "old-receiver"):
        document["v"] = 2
    return json.dumps(document, separators=(",", ":"), sort_keys=True).encode()


def receipt(uid, upload, claim) -> bytes:
    hashes = [upload["hashes"][i] for i in range(upload["chunks"])]
    if mode == "hashes-only":
        # Without the bytes: the claim echoed, its root and head never recomputed.
        file_sha256 = bytes.fromhex(claim["fileSHA256"])
        merkle_root = bytes.fromhex(claim["merkleRoot"])
    else:
        whole = hashlib.sha256()
        for index in range(upload["chunks"]):
            whole.update(upload["data"][index])
        file_sha256 = whole.digest()
        merkle_root = root_recursive([leaf(i, h) for i, h in enumerate(hashes)])
    chain_head = bytes.fromhex(claim["chainHead"]) if mode == "hashes-only" else chain(upload["session"], hashes)
    size = upload["size"]
    if mode == "wrong-root":
        merkle_root = hashlib.sha256(b"another root" + merkle_root).digest()
    elif mode == "wrong-sha256":
        file_sha256 = hashlib.sha256(b"other bytes" + file_sha256).digest()
    elif mode == "wrong-size":
        size += 1
    document = {
        "chainHead": chain_head.hex(),
        "chunks": upload["chunks"],
        "cid": cid(file_sha256),
        "completedAt": "2026-11-30T16:00:00Z",
        "fileSHA256": file_sha256.hex(),
        "id": uid,
        "merkleRoot": merkle_root.hex(),
        "size": size,
    }
    return json.dumps(document, separators=(",", ":"), sort_keys=True).encode()


def chain(session: str, hashes) -> bytes:
    link = hashlib.sha256(b"Aether3D_CC_GENESIS_" + session.encode()).digest()
    for value in hashes:
        link = hashlib.sha256(b"CCv1\x00" + value + link).digest()
    return link


def problem(name: str, status: int, detail: str) -> bytes:
    return json.dumps(
        {"detail": detail, "status": status, "title": name, "type": f"urn:aether:problem:{name}"},
        separators=(",", ":"),
        sort_keys=True,
    ).encode()


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def body(self) -> bytes:
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length else b""

    def answer(self, status, body=b"", headers=(), content_type="application/json"):
        self.send_response(status)
        self.send_header("Aether-Protocol", "1")
        for name, value in headers:
            self.send_header(name, value)
        if body or status not in (204, 304):
            self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def route(self):
        parts = [p for p in self.path.split("?")[0].split("/") if p]
        if not parts or parts[0] != "uploads":
            return None, None, []
        uid = parts[1] if len(parts) > 1 else None
        return uid, uploads.get(uid) if uid else None, parts[2:]

    def do_OPTIONS(self):
        self.answer(204, headers=[("Aether-Capabilities", CAPABILITIES)])

    def do_POST(self):
        body = self.body()
        uid, upload, rest = self.route()
        with lock:
            if uid is None:
                request = json.loads(body)
                uid = upload_id()
                size, chunk_size = request["size"], request["chunkSize"]
                upload = {
                    "size": size,
                    "chunkSize": chunk_size,
                    "chunks": max(1, (size + chunk_size - 1) // chunk_size),
                    "hashes": {},
                    "data": {},
                    "state": "open",
                    "receipt": None,
                    "session": request["chainSessionID"],
                }
                uploads[uid] = upload
                order.append(uid)
                self.answer(
                    201,
                    status_document(uid, upload),
                    [("Location", f"/uploads/{uid}"), ("Aether-Capabilities", CAPABILITIES)],
                    "application/aether-status+json",
                )
                return
            if upload is None:
                self.answer(404, problem("not-found", 404, "no upload has this id"), content_type="application/problem+json")
            elif rest == ["challenges"]:
                answer = challenge_answer(uid, upload, body)
                if mode == "late-answers":
                    time.sleep(0.8)
                self.answer(200, answer)
            elif rest == ["complete"]:
                missing = [i for i in range(upload["chunks"]) if i not in listed(upload)]
                if missing:
                    self.answer(
                        409,
                        problem("incomplete", 409, f"{len(missing)} chunks are missing"),
                        content_type="application/problem+json",
                    )
                    return
                if upload["receipt"] is None:
                    upload["receipt"] = receipt(uid, upload, json.loads(body))
                    upload["state"] = "complete"
                self.answer(200, upload["receipt"], content_type="application/aether-receipt+json")
            else:
                self.answer(404, b"")

    def do_PUT(self):
        body = self.body()
        uid, upload, rest = self.route()
        with lock:
            if upload is None or len(rest) != 2 or rest[0] != "chunks":
                self.answer(404, b"")
                return
            index = int(rest[1])
            members = parse_members(self.headers.get("Aether-Chunk", ""))
            sha = members.get("sha-256", b"")
            if mode not in ("hashes-only", "acks-unstored"):
                if hashlib.sha256(body).digest() != sha or len(body) != chunk_length(upload, index):
                    self.answer(
                        422, problem("digest-mismatch", 422, "the bytes differ"), content_type="application/problem+json"
                    )
                    return
            again = index in upload["hashes"]
            upload["hashes"][index] = sha
            if mode not in ("hashes-only",) and (mode != "acks-unstored" or index == 0):
                upload["data"][index] = body
            self.answer(200 if again else 201, b"", [("Aether-Receipt", f"index={index}, sha-256={sf_bytes(sha)}")])

    def do_GET(self):
        uid, upload, rest = self.route()
        with lock:
            if upload is None or rest:
                self.answer(404, b"")
                return
            self.answer(200, status_document(uid, upload), content_type="application/aether-status+json")

    def do_HEAD(self):
        uid, upload, rest = self.route()
        with lock:
            if upload is None or rest:
                self.answer(404, b"")
                return
            held = listed(upload)
            prefix = 0
            while prefix in held:
                prefix += 1
            offset = min(upload["size"], prefix * upload["chunkSize"])
            self.answer(
                200,
                b"",
                [
                    ("Upload-Offset", str(offset)),
                    ("Upload-Complete", "?1" if upload["state"] == "complete" else "?0"),
                    ("Aether-Received", f"chunks={len(held)}, prefix={prefix}"),
                ],
            )

    def do_DELETE(self):
        uid, upload, _ = self.route()
        with lock:
            if upload is not None:
                upload["state"] = "expired"
        self.answer(204)


def main() -> None:
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    print(json.dumps({"url": f"http://127.0.0.1:{server.server_address[1]}"}), flush=True)
    for _ in sys.stdin:
        pass
    server.shutdown()


if __name__ == "__main__":
    main()
