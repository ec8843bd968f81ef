#!/usr/bin/env python3
"""Independent peer for AetherSecurity's upload security, written from docs/UPLOAD-SECURITY.md (and the Merkle
formulas of docs/INTEGRITY.md) with PyPI `cryptography`; it shares no code with the Swift implementation.

Commands (JSON on stdin, JSON on stdout):
  pin-update   {"pins": [base64...], "effective": s, "expiry": s}
               -> {"payload": {...pin update JSON...}, "publicKeyPem": "..."}  (fresh RSA-4096 key, RSA-PSS/SHA-256)
  resume-key   {"master": hex, "sessionId": str} -> {"key": hex}
  gcm-seal     {"key": hex, "nonce": hex, "aad": hex, "plaintext": hex} -> {"sealed": hex}
  gcm-open     {"key": hex, "nonce": hex, "aad": hex, "sealed": hex} -> {"plaintext": hex} or {"error": "..."}
  pop-prove    {"content": hex, "chunkSize": n, "challenge": hex} -> {"response": hex}
"""
import base64
import hashlib
import hmac
import json
import struct
import sys

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import padding, rsa, x25519
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.kdf.hkdf import HKDF


def hkdf(ikm: bytes, salt: bytes, info: bytes, length: int = 32) -> bytes:
    return HKDF(algorithm=hashes.SHA256(), length=length, salt=salt, info=info).derive(ikm)


def pin_update(request):
    key = rsa.generate_private_key(public_exponent=65537, key_size=4096)
    spki = key.public_key().public_bytes(serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo)
    key_id = hashlib.sha256(spki).hexdigest()
    pins = [base64.b64decode(p) for p in request["pins"]]
    signed = (b"AETHER-PIN-UPDATE-v1\x00" + bytes([len(key_id)]) + key_id.encode()
              + struct.pack(">qq", request["effective"], request["expiry"])
              + bytes([len(pins)]) + b"".join(sorted(pins)))
    signature = key.sign(signed, padding.PSS(mgf=padding.MGF1(hashes.SHA256()), salt_length=32), hashes.SHA256())
    payload = {"version": 1, "newCAPins": request["pins"], "effectiveDate": request["effective"],
               "expiryDate": request["expiry"], "signingKeyId": key_id,
               "signature": base64.b64encode(signature).decode()}
    pem = key.public_key().public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
    return {"payload": payload, "publicKeyPem": pem.decode()}


def resume_key(request):
    session = request["sessionId"].encode()
    return {"key": hkdf(bytes.fromhex(request["master"]), session, b"PR9-resume-" + session).hex()}


def gcm_seal(request):
    sealed = AESGCM(bytes.fromhex(request["key"])).encrypt(
        bytes.fromhex(request["nonce"]), bytes.fromhex(request["plaintext"]), bytes.fromhex(request["aad"]))
    return {"sealed": sealed.hex()}


def gcm_open(request):
    try:
        plain = AESGCM(bytes.fromhex(request["key"])).decrypt(
            bytes.fromhex(request["nonce"]), bytes.fromhex(request["sealed"]), bytes.fromhex(request["aad"]))
    except InvalidTag:
        return {"error": "InvalidTag"}
    return {"plaintext": plain.hex()}


# Merkle tree of docs/INTEGRITY.md: leaf = SHA-256(0x00 || u32le index || chunk hash),
# node = SHA-256(0x01 || u8 level || left || right), split at the largest power of two below n.
def sha256(data: bytes) -> bytes:
    return hashlib.sha256(data).digest()


def split(n: int) -> int:
    k = 1
    while k * 2 < n:
        k *= 2
    return k


def subtree(leaves, lo, hi):
    if hi - lo == 1:
        return leaves[lo], 0
    k = split(hi - lo)
    left, level = subtree(leaves, lo, lo + k)
    right, _ = subtree(leaves, lo + k, hi)
    return sha256(b"\x01" + bytes([level + 1]) + left + right), level + 1


def inclusion_proof(leaves, index):
    siblings, lo, hi = [], 0, len(leaves)
    while hi - lo > 1:
        k = split(hi - lo)
        if index < lo + k:
            siblings.append(subtree(leaves, lo + k, hi)[0])
            hi = lo + k
        else:
            siblings.append(subtree(leaves, lo, lo + k)[0])
            lo = lo + k
    siblings.reverse()
    return b"AMP1" + struct.pack("<QQB", index, len(leaves), len(siblings)) + b"".join(siblings)


def pop_prove(request):
    content = bytes.fromhex(request["content"])
    chunk_size = request["chunkSize"]
    challenge = bytes.fromhex(request["challenge"])
    chunks = [content[i:i + chunk_size] for i in range(0, len(content), chunk_size)]
    chunk_hashes = [sha256(c) for c in chunks]
    leaves = [sha256(b"\x00" + struct.pack("<I", i) + h) for i, h in enumerate(chunk_hashes)]
    root = subtree(leaves, 0, len(leaves))[0] if leaves else sha256(b"")
    claim = struct.pack(">QIQ", len(content), chunk_size, len(chunks)) + root

    assert challenge[:4] == b"APC1"
    nonce, verifier_key, count = challenge[4:20], challenge[20:52], challenge[52]
    items, at = [], 53
    for _ in range(count):
        kind = challenge[at]
        if kind == 1:
            items.append(("full",))
            at += 1
        elif kind == 2:
            offset, length = struct.unpack(">QI", challenge[at + 1:at + 13])
            items.append(("range", offset, length))
            at += 13
        else:
            (index,) = struct.unpack(">I", challenge[at + 1:at + 5])
            items.append(("chunk", index))
            at += 5
    assert at == len(challenge)

    mine = x25519.X25519PrivateKey.generate()
    my_key = mine.public_key().public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    shared = mine.exchange(x25519.X25519PublicKey.from_public_bytes(verifier_key))
    context = claim + verifier_key + my_key
    mac_key = hkdf(shared, nonce, b"aether-pop-v1 mac\x00" + context)
    enc_key = hkdf(shared, nonce, b"aether-pop-v1 enc\x00" + context)

    answers = b"APR1" + bytes([len(items)])
    for item in items:
        if item[0] == "full":
            message = b"aether-pop-v1 full\x00" + nonce + struct.pack(">Q", len(content)) + content
        elif item[0] == "range":
            _, offset, length = item
            message = (b"aether-pop-v1 range\x00" + nonce + struct.pack(">QI", offset, length)
                       + content[offset:offset + length])
        else:
            index = item[1]
            proof = inclusion_proof(leaves, index)
            answers += chunk_hashes[index] + struct.pack(">H", len(proof)) + proof
            message = b"aether-pop-v1 chunk\x00" + nonce + struct.pack(">I", index) + chunks[index]
        answers += hmac.new(mac_key, message, hashlib.sha256).digest()
    aad = b"APS1" + nonce + my_key + verifier_key
    gcm_nonce = hashlib.sha256(shared + b"nonce").digest()[:12]  # any unique 12 bytes; the key is fresh
    sealed = gcm_nonce + AESGCM(enc_key).encrypt(gcm_nonce, answers, aad)
    return {"response": (b"APS1" + nonce + my_key + sealed).hex()}


COMMANDS = {"pin-update": pin_update, "resume-key": resume_key, "gcm-seal": gcm_seal, "gcm-open": gcm_open,
            "pop-prove": pop_prove}

if __name__ == "__main__":
    result = COMMANDS[sys.argv[1]](json.load(sys.stdin))
    json.dump(result, sys.stdout)
