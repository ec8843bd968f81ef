"""Generates Vectors/session_golden.json and Vectors/session_differential.json (docs/SECURE-SESSION.md).

Usage: gen_session_golden.py golden|differential  (writes the JSON to stdout)

Handshakes run through the PyPI `noiseprotocol` package (fixed ephemerals: test files only); payloads,
headers and the replay model come from session_wire.py, written from the document. Both outputs are
deterministic, so the interop tests re-run this script and compare byte for byte.
"""
import hashlib
import json
import struct
import sys
import warnings

from noise.connection import Keypair, NoiseConnection

import session_wire as w

# Fixed ephemerals are the point of a golden file; noiseprotocol warns about them on stderr.
warnings.filterwarnings("ignore", message="One of ephemeral keypairs is already set")

PROTOCOL = b"Noise_NNpsk0_25519_ChaChaPoly_SHA256"
MASK = (1 << 64) - 1
GOLDEN_ROUND = 0x9E3779B97F4A7C15


class SplitMix64:
    def __init__(self, seed):
        self.state = seed & MASK

    def next(self):
        self.state = (self.state + GOLDEN_ROUND) & MASK
        z = self.state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
        return z ^ (z >> 31)


def derive(label, length=32):
    return hashlib.sha256(b"aether session golden " + label.encode()).digest()[:length]


def pattern(count):
    return bytes(i % 251 for i in range(count))


def handshake(name, intent, timestamp, previous, payload):
    """Runs one NNpsk0 handshake through noiseprotocol with fixed ephemerals."""
    psk, key_id = derive(name + " psk"), derive(name + " key id", 16)
    attempt_id = struct.unpack(">Q", derive(name + " attempt", 8))[0] | 1
    e_init, e_resp = derive(name + " initiator ephemeral"), derive(name + " responder ephemeral")
    prologue = w.prologue(attempt_id, key_id)
    hello = w.enc_hello(intent, timestamp, key_id, previous)
    init = NoiseConnection.from_name(PROTOCOL)
    resp = NoiseConnection.from_name(PROTOCOL)
    for conn, eph, role in ((init, e_init, "i"), (resp, e_resp, "r")):
        conn.set_psks(psk=psk)
        conn.set_prologue(prologue)
        conn.set_as_initiator() if role == "i" else conn.set_as_responder()
        conn.set_keypair_from_private_bytes(Keypair.EPHEMERAL, eph)
        conn.start_handshake()
    message1 = w.message1_header(attempt_id, key_id) + bytes(init.write_message(hello))
    assert bytes(resp.read_message(message1[26:])) == hello
    w.parse_hello(hello)
    message2 = w.message2_header(attempt_id) + bytes(resp.write_message(payload))
    assert bytes(init.read_message(message2[10:])) == payload
    assert init.handshake_finished and resp.handshake_finished
    assert init.get_handshake_hash() == resp.get_handshake_hash()
    case = {
        "name": name, "psk": psk.hex(), "key_id": key_id.hex(), "attempt_id": attempt_id,
        "initiator_ephemeral": e_init.hex(), "responder_ephemeral": e_resp.hex(),
        "intent": intent, "timestamp": timestamp, "previous_session_id": previous,
        "hello": hello.hex(), "message1": message1.hex(), "payload": payload.hex(),
        "outcome": outcome(payload, key_id), "message2": message2.hex(),
        "handshake_hash": init.get_handshake_hash().hex(),
    }
    return case, init, resp


def outcome(payload, key_id):
    try:
        w.parse_message2_payload(payload)
    except w.WireError:
        return "unparseable"
    kind = payload[0]
    if kind == 0x01:
        return "accepted"
    if kind == 0x54 and payload[1:17] != key_id:
        return "unparseable"
    return {0x50: "refused:stale", 0x51: "refused:too_new", 0x52: "refused:pair_again",
            0x53: "refused:session_busy", 0x54: "refused:tombstone"}[kind]


def seal(conn, direction, inner_type, session_id, counter, plaintext):
    header = w.enc_record_header(direction, inner_type, session_id, counter)
    cipher = conn.noise_protocol.cipher_state_encrypt
    cipher.set_nonce(counter)
    return header + bytes(cipher.encrypt_with_ad(header, plaintext))


def records(init, resp, session_id, specs):
    out = []
    for direction, inner_type, counter, plaintext in specs:
        conn = init if direction == 0 else resp
        datagram = seal(conn, direction, inner_type, session_id, counter, plaintext)
        entry = {"direction": direction, "inner_type": inner_type, "counter": counter,
                 "content": w.classify_record(inner_type, plaintext)}
        if len(plaintext) > 2048:
            entry.update(plaintext_pattern=len(plaintext), datagram_sha256=hashlib.sha256(datagram).hexdigest())
        else:
            entry.update(plaintext=plaintext.hex(), datagram=datagram.hex())
        out.append(entry)
    return out


def slot_entries(count):
    return [(derive(f"slot {i}", 16), 1 if i % 3 else 2) for i in range(count)]


LONG_NAME = "Atelier Zürich — scanner host Ω 3D · 東京 studio for very large files"
LARGEST_ACCEPT = w.enc_accept(0x1122334455667788, 1764460800000, 600000, 604800, 0xFFFFFFFF, 65471,
                              slot_entries(16), LONG_NAME)
SMALL_ACCEPT = w.enc_accept(0x0000000000000042, 1764460800123, 15000, 3600, 1 << 31, 1200, [], "host")
T0 = 1764460800000


def golden():
    assert len(LARGEST_ACCEPT) == 369, len(LARGEST_ACCEPT)
    assert len(w.truncate_name(LONG_NAME)) <= 64 and len(LONG_NAME.encode()) > 64
    cases = []
    spec = [
        ("connect_small_accept", 1, T0, 0, SMALL_ACCEPT),
        ("reconnect_largest_accept", 2, T0 + 1, 0x0102030405060708, LARGEST_ACCEPT),
        ("promote_accept", 3, T0 + 2, 0, w.enc_accept(7, T0, 1000, 60, 4095, 1200, slot_entries(2), "")),
        ("refused_stale", 1, T0 - 500000, 0, w.enc_stale(T0)),
        ("refused_too_new", 1, T0 + 900000, 0, w.enc_too_new(T0)),
        ("refused_pair_again", 1, T0, 0, w.enc_pair_again()),
        ("refused_session_busy", 2, T0, 99, w.enc_session_busy(60000)),
        ("unparseable_empty_payload", 1, T0, 0, b""),
        ("unparseable_unknown_kind", 1, T0, 0, b"\x7f"),
        ("unparseable_accept_trailing_byte", 1, T0, 0, SMALL_ACCEPT + b"\x00"),
        ("unparseable_accept_truncated", 1, T0, 0, SMALL_ACCEPT[:-1]),
        ("unparseable_accept_liveness_999", 1, T0, 0, SMALL_ACCEPT[:17] + struct.pack(">I", 999) + SMALL_ACCEPT[21:]),
        ("unparseable_stale_zero_time", 1, T0, 0, w.enc_stale(0)),
        ("unparseable_busy_60001", 1, T0, 0, w.enc_session_busy(60001)),
        ("unparseable_tombstone_other_key", 1, T0, 0, w.enc_tombstone(derive("another key", 16), T0)),
    ]
    for name, intent, ts, previous, payload in spec:
        case, init, resp = handshake(name, intent, ts, previous, payload)
        if name == "connect_small_accept":
            case["records"] = records(init, resp, 0x42, [(0, 0x40, 0, b""), (1, 0x00, 0, b"welcome")])
        if name == "reconnect_largest_accept":
            sid = 0x1122334455667788
            case["records"] = records(init, resp, sid, [
                (0, 0x40, 0, b""), (0, 0x40, 1, b""), (0, 0x00, 2, b"hello host"), (0, 0x3F, 3, pattern(1200)),
                (0, 0x42, 4, struct.pack(">I", 7)), (0, 0x46, 5, b"x"), (0, 0xFF, 6, b""),
                (0, 0x40, 7, b"\x00"), (0, 0x41, 8, b"\x00"), (0, 0x00, 9, pattern(65471)),
                (0, 0x01, 0xFFFFFFFF, b"last"),
                (1, 0x00, 0, b"hello client"), (1, 0x44, 1, w.enc_slots(slot_entries(16))),
                (1, 0x43, 2, w.enc_counts_answer(7, 12, 9, 1, 2, 3)), (1, 0x45, 3, b""), (1, 0x41, 4, b"\x01"),
                (1, 0x46, 5, b"future"), (1, 0x41, 6, b"\x09"), (1, 0x3F, 0xFFFFFFFF, b"end"),
            ])
        cases.append(case)
    # The tombstone must name the handshake's own key, so it is built after the key id is known.
    key_id = derive("refused_tombstone key id", 16)
    case, _, _ = handshake("refused_tombstone", 1, T0, 0, w.enc_tombstone(key_id, T0 - 1))
    cases.append(case)
    return {
        "format": "docs/SECURE-SESSION.md v3; generated by Tests/Interop/peers/gen_session_golden.py golden",
        "protocol": PROTOCOL.decode(),
        "handshakes": cases,
        "rejects": rejects(),
        "replay_script": replay_script(cases[1]),
    }


def rejects():
    hello = w.enc_hello(1, T0, derive("k", 16), 0)
    acc = SMALL_ACCEPT
    big = LARGEST_ACCEPT
    hdr = w.enc_record_header(0, 0, 5, 9)
    m1 = bytes([1, 3]) + b"\x00" * 7 + b"\x01" + b"\x00" * 100
    m2 = bytes([2, 3]) + b"\x00" * 7 + b"\x01" + b"\x00" * 48
    k = derive("slot 0", 16)
    items = [
        ("hello", hello[:-1], "35 bytes"), ("hello", hello + b"\x00", "37 bytes"),
        ("hello", b"\x02" + hello[1:], "version 2"), ("hello", hello[:1] + b"\x00" + hello[2:], "intent 0"),
        ("hello", hello[:1] + b"\x04" + hello[2:], "intent 4"), ("hello", hello[:3] + b"\x01" + hello[4:], "flags set"),
        ("hello", w.enc_hello(1, 0, k, 0), "zero timestamp"), ("hello", w.enc_hello(1, T0, k, 5), "connect with previous"),
        ("hello", w.enc_hello(2, T0, k, 0), "reconnect without previous"),
        ("message2_payload", b"", "empty"), ("message2_payload", b"\x02", "unknown kind 0x02"),
        ("message2_payload", b"\x55", "unknown kind 0x55"),
        ("accept", acc[:17] + struct.pack(">I", 600001) + acc[21:], "liveness 600001"),
        ("accept", acc[:21] + struct.pack(">I", 59) + acc[25:], "age 59"),
        ("accept", acc[:21] + struct.pack(">I", 604801) + acc[25:], "age 604801"),
        ("accept", acc[:25] + struct.pack(">I", 4094) + acc[29:], "max counter 4094"),
        ("accept", acc[:29] + struct.pack(">H", 1199) + acc[31:], "max plaintext 1199"),
        ("accept", acc[:29] + struct.pack(">H", 65472) + acc[31:], "max plaintext 65472"),
        ("accept", acc[:1] + b"\x00" * 8 + acc[9:], "session id zero"),
        ("accept", acc[:9] + b"\x00" * 8 + acc[17:], "host time zero"),
        ("accept", acc[:31] + bytes([17]) + b"".join(derive(f"s{i}", 16) + b"\x01" for i in range(17)) + b"\x00",
         "17 slots"),
        ("accept", acc[:31] + b"\x02" + k + b"\x01" + k + b"\x01" + b"\x00", "duplicate slot"),
        ("accept", acc[:31] + b"\x02" + b"\xff" * 16 + b"\x01" + k + b"\x01" + b"\x00", "slots descending"),
        ("accept", acc[:31] + b"\x01" + k + b"\x03" + b"\x00", "slot state 3"),
        ("accept", acc[:32] + bytes([65]) + b"a" * 65, "name 65 bytes"),
        ("accept", acc[:32] + b"\x02a\n", "control character"), ("accept", acc[:32] + b"\x01\x7f", "DEL"),
        ("accept", acc[:32] + b"\x01\xff", "invalid utf-8"), ("accept", acc[:32] + b"\x02\xc0\xaf", "overlong utf-8"),
        ("accept", acc[:32] + b"\x03\xed\xa0\x80", "utf-16 surrogate"), ("accept", acc[:32] + b"\x02\xc3", "cut scalar"),
        ("accept", big + b"\x00", "trailing byte"), ("accept", acc[:-1], "truncated name"),
        ("stale", w.enc_stale(T0)[:-1], "8 bytes"), ("stale", w.enc_stale(0), "zero time"),
        ("stale", w.enc_too_new(T0), "too-new kind"), ("too_new", w.enc_too_new(T0) + b"\x00", "10 bytes"),
        ("pair_again", b"\x52\x00", "2 bytes"), ("pair_again", b"", "empty"),
        ("session_busy", w.enc_session_busy(60001), "retry 60001"), ("session_busy", b"\x53\x00\x00\x00", "4 bytes"),
        ("tombstone", w.enc_tombstone(k, 0), "zero time"), ("tombstone", w.enc_tombstone(k, 1)[:-1], "24 bytes"),
        ("record_header", b"\x02" + hdr[1:], "type 0x02"), ("record_header", hdr[:1] + b"\x04" + hdr[2:], "version 4"),
        ("record_header", hdr[:2] + b"\x02" + hdr[3:], "direction 2"),
        ("record_header", w.enc_record_header(0, 0, 0, 1), "session id zero"),
        ("record_header", hdr[:12] + struct.pack(">Q", 1 << 32), "counter 2^32"),
        ("record_header", hdr[:12] + b"\xff" * 8, "counter 2^64-1"),
        ("record_header", hdr[:-1], "19 bytes"), ("record_header", hdr + b"\x00", "21 bytes"),
        ("confirm", b"\x00", "non-empty"), ("keep_alive", b"\x00", "non-empty"),
        ("bye", b"\x04", "reason 4"), ("bye", b"\x00\x00", "2 bytes"), ("bye", b"", "empty"),
        ("counts_query", b"\x00" * 3, "3 bytes"), ("counts_query", b"\x00" * 5, "5 bytes"),
        ("counts_answer", b"\x00" * 43, "43 bytes"), ("counts_answer", b"\x00" * 45, "45 bytes"),
        ("slot_status", b"\x01" + k + b"\x00", "state 0"), ("slot_status", b"\x00\x00", "trailing"),
        ("slot_status", b"", "empty"),
        ("message1", m1[:-1], "109 bytes"), ("message1", b"\x02" + m1[1:], "type 2"),
        ("message1", m1[:1] + b"\x02" + m1[2:], "version 2"), ("message1", m1[:2] + b"\x00" * 8 + m1[10:], "attempt 0"),
        ("message2", m2[:-1], "57 bytes"), ("message2", m2 + b"\x00" * 370, "428 bytes"),
        ("message2", m2[:2] + b"\x00" * 8 + m2[10:], "attempt 0"), ("message2", b"\x01" + m2[1:], "type 1"),
    ]
    parsers = dict(w.PARSERS)
    out = []
    for parser, data, why in items:
        try:
            parsers[parser](data)
        except w.WireError:
            out.append({"parser": parser, "hex": data.hex(), "why": why})
            continue
        raise AssertionError(f"{parser} accepted a reject case: {why}")
    return out


def replay_script(case):
    """3,000 steps on the host -> client direction of the largest-Accept session."""
    rng = SplitMix64(0x5E55_1011_0003_0000)
    model = w.ReplayModel()
    counters, forged, expected = [], [], []
    accepted = []
    for _ in range(3000):
        r = rng.next()
        choice = r % 10
        last = model.last if model.last is not None else 0
        fake = False
        if choice <= 3 or model.last is None:
            c = last + 1 if model.last is not None else 0
        elif choice == 4:
            c = accepted[rng.next() % len(accepted)]
        elif choice == 5:
            c = max(last - rng.next() % 4200, 0)
        elif choice == 6:
            c = max(last - (4095 if rng.next() % 2 else 4096), 0)
        elif choice == 7:
            c = last + rng.next() % 5000
        elif choice == 8:
            c, fake = last + 1 + rng.next() % 3, True
        else:
            c = max(last - rng.next() % 64, 0)
        c = min(c, w.COUNTER_LIMIT - 1)
        ok = (not fake) and model.mark(c)
        if ok:
            accepted.append(c)
        counters.append(c)
        forged.append(fake)
        expected.append(ok)
    return {"case": case["name"], "direction": 1, "counters": counters,
            "forged": pack_bits(forged), "expected": pack_bits(expected)}


def pack_bits(bits):
    out = bytearray((len(bits) + 7) // 8)
    for i, bit in enumerate(bits):
        if bit:
            out[i // 8] |= 0x80 >> (i % 8)
    return out.hex()


# ---------- differential ----------

INTERESTING = [0x00, 0x01, 0x02, 0x03, 0x3F, 0x40, 0x41, 0x7F, 0x80, 0xFE, 0xFF]
SEED = 0xAE7E_5E55_D1FF_0003
INPUTS_PER_PARSER = 4000


def mutate(rng, bases):
    b = bytearray(bases[rng.next() % len(bases)])
    for _ in range(rng.next() % 4):
        op = rng.next() % 7
        n = len(b)
        if op == 0 and n > 0:
            j = rng.next() % (8 * n)
            b[j // 8] ^= 1 << (j % 8)
        elif op == 1 and n > 0:
            j = rng.next() % n
            b[j] = rng.next() % 256
        elif op == 2 and n > 0:
            del b[rng.next() % n:]
        elif op == 3:
            for _ in range(1 + rng.next() % 4):
                b.append(rng.next() % 256)
        elif op == 4 and n > 0:
            del b[rng.next() % n]
        elif op == 5:
            j = rng.next() % (n + 1)
            b.insert(j, rng.next() % 256)
        elif op == 6 and n > 0:
            j = rng.next() % n
            b[j] = INTERESTING[rng.next() % len(INTERESTING)]
    return bytes(b)


def bases():
    k1, k2 = derive("slot 0", 16), derive("slot 1", 16)
    slots = [(k1, 1), (k2, 2)]
    m1_case, _, _ = handshake("connect_small_accept", 1, T0, 0, SMALL_ACCEPT)
    return {
        "hello": [w.enc_hello(1, T0, k1, 0), w.enc_hello(2, T0, k2, 9), w.enc_hello(3, 1, k1, 0)],
        "message2_payload": [SMALL_ACCEPT, w.enc_stale(T0), w.enc_too_new(T0), w.enc_pair_again(),
                             w.enc_session_busy(500), w.enc_tombstone(k1, T0)],
        "accept": [SMALL_ACCEPT, LARGEST_ACCEPT, w.enc_accept(1, 1, 1000, 60, 4095, 1200, slots, "é")],
        "stale": [w.enc_stale(T0), w.enc_stale(1)],
        "too_new": [w.enc_too_new(T0), w.enc_too_new(1 << 63)],
        "pair_again": [w.enc_pair_again()],
        "session_busy": [w.enc_session_busy(0), w.enc_session_busy(60000)],
        "tombstone": [w.enc_tombstone(k1, T0), w.enc_tombstone(k2, 1)],
        "record_header": [w.enc_record_header(0, 0x00, 1, 0), w.enc_record_header(1, 0x40, 0x42, 0xFFFFFFFF),
                          w.enc_record_header(0, 0x3F, 7, 5), w.enc_record_header(1, 0x46, 9, 1)],
        "confirm": [b""],
        "bye": [b"\x00", b"\x03"],
        "counts_query": [struct.pack(">I", 7)],
        "counts_answer": [w.enc_counts_answer(7, 1, 2, 3, 4, 5)],
        "slot_status": [w.enc_slots(slots), w.enc_slots([]), w.enc_slots(slot_entries(16))],
        "keep_alive": [b""],
        "message1": [bytes.fromhex(m1_case["message1"])],
        "message2": [bytes.fromhex(m1_case["message2"]), w.message2_header(5) + b"\x00" * 48],
    }


def differential():
    base_table = bases()
    parsers = []
    for index, (name, parse) in enumerate(w.PARSERS):
        rng = SplitMix64(SEED ^ (((index + 1) * GOLDEN_ROUND) & MASK))
        inputs_digest, accepted_digest = hashlib.sha256(), hashlib.sha256()
        verdicts = []
        for _ in range(INPUTS_PER_PARSER):
            data = mutate(rng, base_table[name])
            inputs_digest.update(struct.pack(">I", len(data)) + data)
            try:
                canonical = parse(data)
            except w.WireError:
                verdicts.append(False)
                continue
            verdicts.append(True)
            accepted_digest.update(struct.pack(">I", len(canonical)) + canonical)
        for base in base_table[name]:
            parse(base)
        parsers.append({"parser": name, "bases": [b.hex() for b in base_table[name]],
                        "inputs_sha256": inputs_digest.hexdigest(), "accepted": sum(verdicts),
                        "verdicts": pack_bits(verdicts), "accepted_sha256": accepted_digest.hexdigest()})
    return {
        "format": "docs/SECURE-SESSION.md section 5; generated by Tests/Interop/peers/gen_session_golden.py differential",
        "seed": f"{SEED:016x}", "inputs_per_parser": INPUTS_PER_PARSER, "parsers": parsers,
    }


def main():
    mode = sys.argv[1] if len(sys.argv) > 1 else ""
    if mode == "golden":
        document = golden()
    elif mode == "differential":
        document = differential()
    else:
        sys.exit("usage: gen_session_golden.py golden|differential")
    sys.stdout.write(json.dumps(document, indent=1, ensure_ascii=True) + "\n")


if __name__ == "__main__":
    main()
