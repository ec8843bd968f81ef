"""Reference file digests for the interop tests, from hashlib and the PyPI `crc32c` package.

Usage: file_digests.py CHUNK_SIZE PATH...
For each path prints "<sha256 hex> <crc32c 8 hex>" for the whole file, then one line
"chunk <index> <sha256 hex> <crc32c 8 hex>" per CHUNK_SIZE chunk. Reads in blocks, so a
several-GiB file never sits in memory.
"""
import hashlib
import sys

import crc32c


def main() -> None:
    chunk_size = int(sys.argv[1])
    block = 8 << 20
    for path in sys.argv[2:]:
        whole = hashlib.sha256()
        whole_crc = 0
        chunks = []
        with open(path, "rb") as f:
            index = 0
            while True:
                chunk_sha = hashlib.sha256()
                chunk_crc = 0
                remaining = chunk_size
                while remaining > 0:
                    data = f.read(min(block, remaining))
                    if not data:
                        break
                    remaining -= len(data)
                    whole.update(data)
                    chunk_sha.update(data)
                    whole_crc = crc32c.crc32c(data, whole_crc)
                    chunk_crc = crc32c.crc32c(data, chunk_crc)
                if remaining == chunk_size:
                    break
                chunks.append(f"chunk {index} {chunk_sha.hexdigest()} {chunk_crc:08x}")
                index += 1
        print(f"{whole.hexdigest()} {whole_crc:08x}")
        for line in chunks:
            print(line)


if __name__ == "__main__":
    main()
