"""ISA-L erasure-coding peer for the interop tests, through ctypes on libisal.so.2 (Debian libisal2).

Independent of Aether's code: the matrix, the tables and the arithmetic are all ISA-L's.

  ec_isal.py matrix K M            prints the (K+M) x K gf_gen_cauchy1_matrix, one hex row per line
  ec_isal.py encode K M LEN        stdin: K data shards of LEN bytes; stdout: the M parity shards
  ec_isal.py decode K M LEN E,...  stdin: all K+M shards (erased ones' bytes are ignored);
                                   stdout: the K data shards, erased ones rebuilt by ISA-L
"""
import ctypes
import sys

isal = ctypes.CDLL("libisal.so.2")
Bytes = ctypes.POINTER(ctypes.c_ubyte)
isal.gf_gen_cauchy1_matrix.argtypes = [Bytes, ctypes.c_int, ctypes.c_int]
isal.gf_invert_matrix.argtypes = [Bytes, Bytes, ctypes.c_int]
isal.gf_invert_matrix.restype = ctypes.c_int
isal.ec_init_tables.argtypes = [ctypes.c_int, ctypes.c_int, Bytes, Bytes]
isal.ec_encode_data.argtypes = [
    ctypes.c_int, ctypes.c_int, ctypes.c_int, Bytes, ctypes.POINTER(Bytes), ctypes.POINTER(Bytes)
]
isal.gf_mul.argtypes = [ctypes.c_ubyte, ctypes.c_ubyte]
isal.gf_mul.restype = ctypes.c_ubyte


def cauchy(k: int, m: int) -> ctypes.Array:
    matrix = (ctypes.c_ubyte * ((k + m) * k))()
    isal.gf_gen_cauchy1_matrix(matrix, k + m, k)
    return matrix


def apply(rows: int, k: int, coefficients: ctypes.Array, sources: list, length: int) -> list:
    """ISA-L's dot products: rows outputs from k sources with the rows x k coefficient matrix."""
    tables = (ctypes.c_ubyte * (32 * k * rows))()
    isal.ec_init_tables(k, rows, coefficients, tables)
    outputs = [(ctypes.c_ubyte * length)() for _ in range(rows)]
    source_ptrs = (Bytes * k)(*[ctypes.cast(s, Bytes) for s in sources])
    output_ptrs = (Bytes * rows)(*[ctypes.cast(o, Bytes) for o in outputs])
    isal.ec_encode_data(length, k, rows, tables, source_ptrs, output_ptrs)
    return [bytes(o) for o in outputs]


def shards_from_stdin(count: int, length: int) -> list:
    data = sys.stdin.buffer.read()
    if len(data) != count * length:
        sys.exit(f"expected {count * length} bytes on stdin, got {len(data)}")
    return [(ctypes.c_ubyte * length).from_buffer_copy(data[i * length : (i + 1) * length]) for i in range(count)]


def main() -> None:
    command, k, m = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    matrix = cauchy(k, m)
    if command == "matrix":
        for row in range(k + m):
            print(bytes(matrix[row * k : (row + 1) * k]).hex())
        return
    length = int(sys.argv[4])
    out = sys.stdout.buffer
    if command == "encode":
        data = shards_from_stdin(k, length)
        parity_rows = (ctypes.c_ubyte * (m * k)).from_buffer_copy(bytes(matrix[k * k :]))
        for shard in apply(m, k, parity_rows, data, length):
            out.write(shard)
    elif command == "decode":
        erased = {int(e) for e in sys.argv[5].split(",") if e}
        shards = shards_from_stdin(k + m, length)
        survivors = [i for i in range(k + m) if i not in erased][:k]
        if len(survivors) < k:
            sys.exit("too few shards")
        sub = (ctypes.c_ubyte * (k * k))()
        for r, index in enumerate(survivors):
            sub[r * k : (r + 1) * k] = matrix[index * k : (index + 1) * k]
        inverse = (ctypes.c_ubyte * (k * k))()
        if isal.gf_invert_matrix(sub, inverse, k) != 0:
            sys.exit("singular")
        missing = [d for d in range(k) if d in erased]
        rebuilt = {}
        if missing:
            rows = (ctypes.c_ubyte * (len(missing) * k))()
            for r, d in enumerate(missing):
                rows[r * k : (r + 1) * k] = inverse[d * k : (d + 1) * k]
            outputs = apply(len(missing), k, rows, [shards[i] for i in survivors], length)
            rebuilt = dict(zip(missing, outputs))
        for d in range(k):
            out.write(rebuilt[d] if d in rebuilt else bytes(shards[d]))
    else:
        sys.exit(f"unknown command {command}")


if __name__ == "__main__":
    main()
