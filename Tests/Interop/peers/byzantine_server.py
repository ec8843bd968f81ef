"""An honest server's answers to Byzantine challenges, with Python's hmac module.

Input: frames of an 8-byte little-endian length and that many bytes; each frame is a 32-byte
nonce followed by the chunk. Output: one line per frame, hex of HMAC-SHA-256(key=nonce, msg=chunk).
"""
import hashlib
import hmac
import struct
import sys


def main() -> None:
    data = sys.stdin.buffer.read()
    offset = 0
    while offset < len(data):
        (length,) = struct.unpack_from("<Q", data, offset)
        offset += 8
        frame = data[offset : offset + length]
        if len(frame) != length or length < 32:
            sys.exit("bad frame")
        offset += length
        print(hmac.new(frame[:32], frame[32:], hashlib.sha256).hexdigest())


if __name__ == "__main__":
    main()
