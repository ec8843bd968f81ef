"""Reference CIDs for the interop tests, computed with the PyPI `multiformats` package.

Arguments: file paths. Output, one line per file, space-separated:
  CIDv1 raw sha2-256 base32 (what Aether must produce),
  then three CIDs of the same file that Aether must refuse: dag-pb codec, base58btc multibase,
  sha2-512 multihash.
"""
import sys

from multiformats import CID, multihash


def main() -> None:
    for path in sys.argv[1:]:
        with open(path, "rb") as f:
            data = f.read()
        sha256 = multihash.digest(data, "sha2-256")
        sha512 = multihash.digest(data, "sha2-512")
        print(
            CID("base32", 1, "raw", sha256),
            CID("base32", 1, "dag-pb", sha256),
            CID("base58btc", 1, "raw", sha256),
            CID("base32", 1, "raw", sha512),
        )


if __name__ == "__main__":
    main()
