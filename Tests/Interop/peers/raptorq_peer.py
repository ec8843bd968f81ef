"""Live RaptorQ (RFC 6330) peer: the PyPI `raptorq` package (Rust underneath) for Aether's interop tests
and aether-bench.

Packets travel as frames: a 4-byte big-endian length, then the packet (FEC payload ID + symbol).

  encode T REPAIR LOSS SEED   stdin: object; stdout: frames of raptorq's packets (REPAIR repair packets a
                              block), with LOSS of each block's packets dropped at random (seeded), shuffled
  decode F T                  stdin: frames; stdout: the object; exit 3 when raptorq cannot decode
  time-encode T REPAIR N      stdin: object; stdout: median seconds of N runs (after one untimed) of encode +
                              get_encoded_packets
  time-decode T REPAIR N      stdin: object; stdout: median seconds of N decodes (after one untimed) of its
                              packets minus 1 in 20
"""
import random
import struct
import sys
import time

import raptorq


def frames(data):
    out = []
    offset = 0
    while offset < len(data):
        (length,) = struct.unpack(">I", data[offset:offset + 4])
        out.append(data[offset + 4:offset + 4 + length])
        offset += 4 + length
    return out


def framed(packets):
    return b"".join(struct.pack(">I", len(p)) + p for p in packets)


def main():
    command = sys.argv[1]
    if command == "encode":
        t, repair, loss, seed = int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4]), int(sys.argv[5])
        data = sys.stdin.buffer.read()
        packets = raptorq.Encoder.with_defaults(data, t).get_encoded_packets(repair)
        rng = random.Random(seed)
        kept = []
        for block in sorted(set(p[0] for p in packets)):
            mine = [p for p in packets if p[0] == block]
            kept += rng.sample(mine, len(mine) - int(len(mine) * loss))
        rng.shuffle(kept)
        sys.stdout.buffer.write(framed(kept))
    elif command == "decode":
        f, t = int(sys.argv[2]), int(sys.argv[3])
        decoder = raptorq.Decoder.with_defaults(f, t)
        for packet in frames(sys.stdin.buffer.read()):
            result = decoder.decode(packet)
            if result is not None:
                sys.stdout.buffer.write(result)
                return
        sys.exit(3)
    elif command in ("time-encode", "time-decode"):
        t, repair, runs = int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
        data = sys.stdin.buffer.read()
        packets = raptorq.Encoder.with_defaults(data, t).get_encoded_packets(repair)
        # Lose every twentieth packet so the decoder has to use repair symbols.
        kept = [p for i, p in enumerate(packets) if i % 20 != 0]
        times = []
        # One untimed warm-up run (allocator, page cache), as aether-bench does for its own side.
        for run in range(runs + 1):
            if command == "time-encode":
                start = time.perf_counter()
                raptorq.Encoder.with_defaults(data, t).get_encoded_packets(repair)
                if run > 0:
                    times.append(time.perf_counter() - start)
            else:
                start = time.perf_counter()
                decoder = raptorq.Decoder.with_defaults(len(data), t)
                result = None
                for packet in kept:
                    result = decoder.decode(packet)
                    if result is not None:
                        break
                if run > 0:
                    times.append(time.perf_counter() - start)
                if result != data:
                    sys.exit(3)
        times.sort()
        print(times[len(times) // 2])
    else:
        sys.exit(2)


if __name__ == "__main__":
    main()
