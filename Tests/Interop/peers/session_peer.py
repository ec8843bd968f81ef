"""A live session client on PyPI `noiseprotocol`, for the Swift host in SessionInteropTests.

Two one-shot steps (stdin JSON -> stdout JSON), because PythonPeer runs a script once per call:
  hello:  build message 1 with a fresh random ephemeral; print it and that ephemeral (test only)
  finish: rebuild the same initiator from that ephemeral (checking message 1 is identical), read the
          host's message 2, open the host's records, and seal client records for the host to open.
Wire encoding and parsing come from session_wire.py (written from docs/SECURE-SESSION.md).
"""
import json
import os
import struct
import sys
import warnings

from noise.connection import Keypair, NoiseConnection

import session_wire as w

warnings.filterwarnings("ignore", message="One of ephemeral keypairs is already set")
PROTOCOL = b"Noise_NNpsk0_25519_ChaChaPoly_SHA256"


def initiator(request, ephemeral):
    key_id = bytes.fromhex(request["key_id"])
    conn = NoiseConnection.from_name(PROTOCOL)
    conn.set_psks(psk=bytes.fromhex(request["psk"]))
    conn.set_prologue(w.prologue(request["attempt_id"], key_id))
    conn.set_as_initiator()
    conn.set_keypair_from_private_bytes(Keypair.EPHEMERAL, ephemeral)
    conn.start_handshake()
    hello = w.enc_hello(request["intent"], request["timestamp"], key_id, request["previous_session_id"])
    message1 = w.message1_header(request["attempt_id"], key_id) + bytes(conn.write_message(hello))
    return conn, message1


def step_hello(request):
    ephemeral = os.urandom(32)
    _, message1 = initiator(request, ephemeral)
    return {"message1": message1.hex(), "ephemeral": ephemeral.hex()}


def step_finish(request):
    conn, message1 = initiator(request, bytes.fromhex(request["ephemeral"]))
    assert message1.hex() == request["message1"], "message 1 not reproduced"
    message2 = bytes.fromhex(request["message2"])
    w.parse_message2(message2)
    assert struct.unpack_from(">Q", message2, 2)[0] == request["attempt_id"], "attempt id"
    payload = bytes(conn.read_message(message2[10:]))
    canonical = w.parse_message2_payload(payload)
    assert canonical == payload and payload[0] == 0x01, "not a canonical accept"
    (session_id,) = struct.unpack_from(">Q", payload, 1)
    opened = []
    decrypt = conn.noise_protocol.cipher_state_decrypt
    for record in request["host_records"]:
        datagram = bytes.fromhex(record)
        header = datagram[:20]
        w.parse_record_header(header)
        _, _, direction, inner, sid, counter = struct.unpack(">BBBBQQ", header)
        assert direction == 1 and sid == session_id, "host record header"
        decrypt.set_nonce(counter)
        plaintext = bytes(decrypt.decrypt_with_ad(header, datagram[20:]))
        opened.append({"inner_type": inner, "counter": counter, "plaintext": plaintext.hex(),
                       "content": w.classify_record(inner, plaintext)})
    encrypt = conn.noise_protocol.cipher_state_encrypt
    client_records = []
    for counter, (inner, plaintext) in enumerate([(0x40, b""), (0x00, b"from python"), (0x50, b"future"),
                                                  (0x42, struct.pack(">I", 99)), (0x3F, os.urandom(1200))]):
        header = w.enc_record_header(0, inner, session_id, counter)
        encrypt.set_nonce(counter)
        client_records.append({"datagram": (header + bytes(encrypt.encrypt_with_ad(header, plaintext))).hex(),
                               "plaintext": plaintext.hex(), "content": w.classify_record(inner, plaintext)})
    return {"session_id": session_id, "opened": opened, "client_records": client_records}


def main():
    request = json.load(sys.stdin)
    step = {"hello": step_hello, "finish": step_finish}[sys.argv[1]]
    json.dump(step(request), sys.stdout)


if __name__ == "__main__":
    main()
