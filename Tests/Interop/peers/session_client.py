"""A live secure-session client over UDP on PyPI `noiseprotocol`, for the Swift host in SessionLiveTests.

stdin JSON: {"port", "key_id", "psk", "count", "timeout"}; stdout JSON with what happened.
It runs one attempt the way docs/SECURE-SESSION.md section 2.3 says: message 1 resent unchanged every
250 ms, then a fresh Confirm record every 100 ms until the host's first record proves the commit, then
`count` application records (inner type 0x01, "py-<i>"), collecting the host's echoes, then a sealed BYE.
Wire encoding and parsing come from session_wire.py (written from the document, not from the Swift code).
"""
import json
import os
import select
import socket
import struct
import sys
import time

from noise.connection import NoiseConnection

import session_wire as w

PROTOCOL = b"Noise_NNpsk0_25519_ChaChaPoly_SHA256"


def main():
    request = json.load(sys.stdin)
    host = ("127.0.0.1", request["port"])
    key_id = bytes.fromhex(request["key_id"])
    deadline = time.monotonic() + request["timeout"]
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sock.bind(("127.0.0.1", 0))

    attempt_id = struct.unpack(">Q", os.urandom(8))[0] or 1
    conn = NoiseConnection.from_name(PROTOCOL)
    conn.set_psks(psk=bytes.fromhex(request["psk"]))
    conn.set_prologue(w.prologue(attempt_id, key_id))
    conn.set_as_initiator()
    conn.start_handshake()
    hello = w.enc_hello(0x01, int(time.time() * 1000), key_id, 0)
    message1 = w.message1_header(attempt_id, key_id) + bytes(conn.write_message(hello))
    assert len(message1) == 110

    def receive(until):
        wait = max(0.0, until - time.monotonic())
        ready, _, _ = select.select([sock], [], [], wait)
        if not ready:
            return None
        data, _ = sock.recvfrom(65535)
        return data

    # Handshake: resend message 1 unchanged every 250 ms.
    resends = 0
    payload = None
    while payload is None:
        if time.monotonic() > deadline:
            raise SystemExit("no message 2")
        sock.sendto(message1, host)
        next_send = time.monotonic() + 0.25
        while time.monotonic() < next_send and payload is None:
            data = receive(next_send)
            if data is None or data[0] != 0x02:
                continue
            w.parse_message2(data)
            if struct.unpack_from(">Q", data, 2)[0] != attempt_id:
                continue
            payload = bytes(conn.read_message(data[10:]))
        resends += 1
    assert w.parse_message2_payload(payload) == payload and payload[0] == 0x01, "not an Accept"
    (session_id,) = struct.unpack_from(">Q", payload, 1)
    encrypt = conn.noise_protocol.cipher_state_encrypt
    decrypt = conn.noise_protocol.cipher_state_decrypt
    counter = [0]

    def seal(inner, plaintext):
        header = w.enc_record_header(0, inner, session_id, counter[0])
        encrypt.set_nonce(counter[0])
        counter[0] += 1
        return header + bytes(encrypt.encrypt_with_ad(header, plaintext))

    seen = set()

    def open_record(data):
        header = data[:20]
        w.parse_record_header(header)
        _, _, direction, inner, sid, record_counter = struct.unpack(">BBBBQQ", header)
        if direction != 1 or sid != session_id or record_counter in seen:
            return None
        decrypt.set_nonce(record_counter)
        plaintext = bytes(decrypt.decrypt_with_ad(header, data[20:]))
        seen.add(record_counter)
        return inner, plaintext

    # Confirm every 100 ms until the host's first record (its slot status) proves the commit.
    slot_status = None
    confirms = 0
    while slot_status is None:
        if time.monotonic() > deadline:
            raise SystemExit("no commit")
        sock.sendto(seal(0x40, b""), host)
        confirms += 1
        next_send = time.monotonic() + 0.1
        while time.monotonic() < next_send and slot_status is None:
            data = receive(next_send)
            if data is None or data[0] != 0x03:
                continue
            opened = open_record(data)
            if opened and opened[0] == 0x44:
                slot_status = w.parse_slot_status(opened[1]).hex()

    echoes = []
    for i in range(request["count"]):
        sock.sendto(seal(0x01, b"py-%d" % i), host)
    while len(echoes) < request["count"] and time.monotonic() < deadline:
        data = receive(deadline)
        if data is None or data[0] != 0x03:
            continue
        opened = open_record(data)
        if opened and opened[0] < 0x40:
            echoes.append({"type": opened[0], "text": opened[1].decode()})
    sock.sendto(seal(0x41, b"\x00"), host)
    json.dump({"session_id": session_id, "resends": resends, "confirms": confirms,
               "slot_status": slot_status, "echoes": echoes}, sys.stdout)


if __name__ == "__main__":
    main()
