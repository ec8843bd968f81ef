"""Reference digests for the interop tests: reads frames from stdin, prints one line per frame.

Input: a sequence of frames, each an 8-byte little-endian length followed by that many bytes.
Output: "<sha256 hex> <crc32c as 8 hex digits>" per frame, computed with hashlib and the PyPI
`crc32c` package (independent of Aether's code).
"""
import hashlib
import struct
import sys

import crc32c


def main() -> None:
    data = sys.stdin.buffer.read()
    offset = 0
    while offset < len(data):
        (length,) = struct.unpack_from("<Q", data, offset)
        offset += 8
        frame = data[offset : offset + length]
        if len(frame) != length:
            sys.exit("truncated frame")
        offset += length
        print(f"{hashlib.sha256(frame).hexdigest()} {crc32c.crc32c(frame):08x}")


if __name__ == "__main__":
    main()
