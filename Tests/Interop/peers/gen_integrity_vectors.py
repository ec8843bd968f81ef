"""Generates Vectors/merkle.json and Vectors/commitment_chain.json for AetherIntegrity.

Written from the formulas in docs/INTEGRITY.md with plain hashlib (not from the Swift code):

  chunk hash i (test input only) = SHA-256(b"aether-vector-chunk" || LE32(i))
  Merkle leaf i     = SHA-256(0x00 || LE32(i) || chunk_hash[i])
  Merkle node       = SHA-256(0x01 || LE8(level) || left || right),  level = 1 + level(left), leaf level 0
  Merkle root(n)    = the left subtree holds the largest power of two k < n leaves, the right the rest;
                      root(0) = SHA-256(b""), root(1) = the leaf.
                      Equivalently: fold the carry slots smallest first, promoting a lone node unchanged.
  chain genesis     = SHA-256(b"Aether3D_CC_GENESIS_" || session_id.encode("utf-8"))
  chain link i      = SHA-256(b"CCv1\\0" || chunk_hash[i] || link[i-1]),  link[-1] = genesis
  jump stride s     = ceil(sqrt(n)) (at least 1) for the planned chunk count n
  jump link k >= 1  = SHA-256(b"CCJv1\\0" || link[k*s-1] || jump[k-1]),  jump[0] = genesis

Usage: gen_integrity_vectors.py OUT_DIR   (writes both files there)
"""
import hashlib
import json
import math
import os
import struct
import sys


def sha256(data: bytes) -> bytes:
    return hashlib.sha256(data).digest()


def chunk_hash(i: int) -> bytes:
    return sha256(b"aether-vector-chunk" + struct.pack("<I", i))


def leaf(i: int, h: bytes) -> bytes:
    return sha256(b"\x00" + struct.pack("<I", i) + h)


def node(level: int, left: bytes, right: bytes) -> bytes:
    return sha256(b"\x01" + struct.pack("<B", level) + left + right)


def split(n: int) -> int:
    k = 1
    while k * 2 < n:
        k *= 2
    return k


def subtree(leaves, lo, hi):
    """(hash, level) of leaves[lo:hi] by the recursive definition."""
    if hi - lo == 1:
        return leaves[lo], 0
    k = split(hi - lo)
    left, left_level = subtree(leaves, lo, lo + k)
    right, _ = subtree(leaves, lo + k, hi)
    return node(left_level + 1, left, right), left_level + 1


def root_recursive(leaves):
    if not leaves:
        return sha256(b"")
    return subtree(leaves, 0, len(leaves))[0]


def root_by_fold(leaves):
    """The streaming form: carry slots per set bit, folded smallest first. Also returns the slots."""
    slots = {}
    for i, lf in enumerate(leaves):
        carry, level, bits = lf, 0, i
        while bits & 1:
            carry = node(level + 1, slots.pop(level), carry)
            level += 1
            bits >>= 1
        slots[level] = carry
    if not slots:
        return sha256(b""), []
    levels = sorted(slots)
    acc = slots[levels[0]]
    for level in levels[1:]:
        acc = node(level + 1, slots[level], acc)
    return acc, [slots[level].hex() for level in sorted(slots, reverse=True)]


def proof(leaves, index):
    siblings = []
    lo, hi = 0, len(leaves)
    while hi - lo > 1:
        k = split(hi - lo)
        if index < lo + k:
            siblings.append(subtree(leaves, lo + k, hi)[0])
            hi = lo + k
        else:
            siblings.append(subtree(leaves, lo, lo + k)[0])
            lo = lo + k
    return [s.hex() for s in reversed(siblings)]


def merkle_case(n, proof_indices):
    hashes = [chunk_hash(i) for i in range(n)]
    leaves = [leaf(i, h) for i, h in enumerate(hashes)]
    root = root_recursive(leaves)
    folded, nodes = root_by_fold(leaves)
    assert root == folded, n
    proofs = [{"leafIndex": i, "siblings": proof(leaves, i)} for i in sorted(set(proof_indices)) if 0 <= i < n]
    return {"leafCount": n, "root": root.hex(), "checkpointNodes": nodes, "proofs": proofs}


def stride(n):
    return max(1, math.isqrt(n - 1) + 1) if n > 1 else 1


def chain_case(session_id, n, keep_links):
    genesis = sha256(b"Aether3D_CC_GENESIS_" + session_id.encode("utf-8"))
    s = stride(n)
    assert s == max(1, math.ceil(math.sqrt(n))) or n > 10**12
    links, jumps = [], []
    previous, previous_jump = genesis, genesis
    for i in range(n):
        previous = sha256(b"CCv1\x00" + chunk_hash(i) + previous)
        links.append(previous.hex())
        if (i + 1) % s == 0:
            previous_jump = sha256(b"CCJv1\x00" + previous + previous_jump)
            jumps.append(previous_jump.hex())
    case = {
        "sessionID": session_id,
        "chunkCount": n,
        "genesis": genesis.hex(),
        "stride": s,
        "head": previous.hex(),
        "jumpLinks": jumps,
    }
    if keep_links:
        case["links"] = links
    return case


def main():
    out_dir = sys.argv[1]
    merkle = []
    for n in range(0, 71):
        merkle.append(merkle_case(n, [0, n // 2, n - 1]))
    for n in (1000, 4097, 65537):
        merkle.append(merkle_case(n, [0, 1, n // 3, n - 2, n - 1]))
    merkle_doc = {
        "description": "AetherIntegrity Merkle roots, checkpoint nodes (tallest first) and inclusion proofs "
        "(siblings leaf to root); chunk hash i = SHA-256(\"aether-vector-chunk\" || LE32(i))",
        "generator": "Tests/Interop/peers/gen_integrity_vectors.py",
        "cases": merkle,
    }
    chain = []
    for n in list(range(0, 21)) + [24, 25, 26, 49, 50, 70]:
        chain.append(chain_case("session-%d" % n, n, True))
    chain.append(chain_case("s\u00e9ance-\u00fc-\u6d4b\u8bd5", 37, True))
    for n in (1000, 4097):
        chain.append(chain_case("large-%d" % n, n, False))
    chain_doc = {
        "description": "AetherIntegrity commitment chains: genesis, stride, every link (small counts), jump links "
        "and head; chunk hash i = SHA-256(\"aether-vector-chunk\" || LE32(i))",
        "generator": "Tests/Interop/peers/gen_integrity_vectors.py",
        "cases": chain,
    }
    for name, doc in (("merkle.json", merkle_doc), ("commitment_chain.json", chain_doc)):
        with open(os.path.join(out_dir, name), "w", encoding="utf-8") as f:
            json.dump(doc, f, indent=1, sort_keys=True, ensure_ascii=True)
            f.write("\n")


if __name__ == "__main__":
    main()
