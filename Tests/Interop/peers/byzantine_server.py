"""An honest server's answers to Byzantine spot checks of version 2, with Python's hmac module.

Input: frames of an 8-byte little-endian length and that many bytes; each frame is a 32-byte nonce, a one-byte
upload id length, the upload id, the chunk index and the range's offset (8 bytes big-endian each), then the range's
bytes. Output: one line per frame, hex of HMAC-SHA-256(key=nonce, msg=u8 len(tag) || tag || u8 len(id) || id ||
be64 index || be64 offset || be64 length || bytes) with tag "aether/byzantine-challenge/v2" (docs/PROTOCOL.md 3.6).
"""
import hashlib
import hmac
import struct
import sys

TAG = b"aether/byzantine-challenge/v2"


def main() -> None:
    data = sys.stdin.buffer.read()
    offset = 0
    while offset < len(data):
        (length,) = struct.unpack_from("<Q", data, offset)
        offset += 8
        frame = data[offset : offset + length]
        if len(frame) != length or length < 33:
            sys.exit("bad frame")
        offset += length
        nonce, id_length = frame[:32], frame[32]
        upload_id = frame[33 : 33 + id_length]
        index, start = struct.unpack_from(">QQ", frame, 33 + id_length)
        chunk = frame[33 + id_length + 16 :]
        message = bytes([len(TAG)]) + TAG + bytes([id_length]) + upload_id
        message += struct.pack(">QQQ", index, start, len(chunk)) + chunk
        print(hmac.new(nonce, message, hashlib.sha256).hexdigest())


if __name__ == "__main__":
    main()
