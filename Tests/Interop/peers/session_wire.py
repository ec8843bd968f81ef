"""Independent encoder/parser of the Aether secure-session wire format, written from docs/SECURE-SESSION.md.

It shares no code with the Swift implementation. Every parser takes bytes and returns a canonical
re-encoding (bytes) or raises WireError; every encoder builds the exact bytes the document gives.
"""
import struct

VERSION = 0x03
MAX_SLOTS = 16
MAX_NAME = 64
COUNTER_LIMIT = 1 << 32
PROLOGUE_LABEL = b"aether-secure-session/3"
MAX_RECORD_PLAINTEXT = 65471


class WireError(ValueError):
    pass


def need(condition, what):
    if not condition:
        raise WireError(what)


# ---------- encoders ----------

def enc_hello(intent, timestamp, key_id, previous):
    return struct.pack(">BBHQ", VERSION, intent, 0, timestamp) + key_id + struct.pack(">Q", previous)


def enc_slots(entries):
    """entries: list of (key_id bytes, state int); sorted ascending here."""
    entries = sorted(entries)
    return bytes([len(entries)]) + b"".join(k + bytes([s]) for k, s in entries)


def truncate_name(name):
    out = b""
    for ch in name:
        piece = ch.encode("utf-8")
        if len(out) + len(piece) > MAX_NAME:
            break
        out += piece
    return out


def enc_accept(session_id, host_time, liveness, age, max_counter, max_plaintext, slots, name):
    name_bytes = truncate_name(name)
    return (struct.pack(">BQQIIIH", 0x01, session_id, host_time, liveness, age, max_counter, max_plaintext)
            + enc_slots(slots) + bytes([len(name_bytes)]) + name_bytes)


def enc_stale(host_time):
    return struct.pack(">BQ", 0x50, host_time)


def enc_too_new(host_time):
    return struct.pack(">BQ", 0x51, host_time)


def enc_pair_again():
    return b"\x52"


def enc_session_busy(retry_after):
    return struct.pack(">BI", 0x53, retry_after)


def enc_tombstone(key_id, retired_at):
    return b"\x54" + key_id + struct.pack(">Q", retired_at)


def enc_record_header(direction, inner_type, session_id, counter):
    return struct.pack(">BBBBQQ", 0x03, VERSION, direction, inner_type, session_id, counter)


def enc_counts_answer(query_id, sealed, opened, auth, replays, unknown):
    return struct.pack(">IQQQQQ", query_id, sealed, opened, auth, replays, unknown)


def message1_header(attempt_id, key_id):
    return struct.pack(">BBQ", 0x01, VERSION, attempt_id) + key_id


def prologue(attempt_id, key_id):
    return PROLOGUE_LABEL + message1_header(attempt_id, key_id)


def message2_header(attempt_id):
    return struct.pack(">BBQ", 0x02, VERSION, attempt_id)


# ---------- parsers (return the canonical re-encoding) ----------

def parse_hello(b):
    need(len(b) == 36, "hello length")
    version, intent, flags, ts = struct.unpack_from(">BBHQ", b, 0)
    key_id = b[12:28]
    (previous,) = struct.unpack_from(">Q", b, 28)
    need(version == VERSION, "hello version")
    need(intent in (1, 2, 3), "hello intent")
    need(flags == 0, "hello flags")
    need(ts != 0, "hello timestamp")
    need(not (intent == 1 and previous != 0), "connect with previous session")
    need(not (intent == 2 and previous == 0), "reconnect without previous session")
    return enc_hello(intent, ts, key_id, previous)


def read_slots(b, offset):
    need(len(b) >= offset + 1, "slot count missing")
    count = b[offset]
    need(count <= MAX_SLOTS, "too many slots")
    offset += 1
    entries = []
    for _ in range(count):
        need(len(b) >= offset + 17, "slot truncated")
        key_id, state = b[offset:offset + 16], b[offset + 16]
        need(state in (1, 2), "slot state")
        need(not entries or entries[-1][0] < key_id, "slots not ascending")
        entries.append((key_id, state))
        offset += 17
    return entries, offset


def parse_slot_status(b):
    entries, end = read_slots(b, 0)
    need(end == len(b), "slot status trailing")
    return enc_slots(entries)


def parse_accept(b):
    need(len(b) >= 31, "accept truncated")
    kind, sid, host_time, liveness, age, max_counter, max_pt = struct.unpack_from(">BQQIIIH", b, 0)
    need(kind == 0x01, "accept kind")
    need(sid != 0, "session id zero")
    need(host_time != 0, "host time zero")
    need(1000 <= liveness <= 600000, "liveness")
    need(60 <= age <= 604800, "age")
    need(max_counter >= 4095, "max counter")
    need(1200 <= max_pt <= 65471, "max plaintext")
    entries, offset = read_slots(b, 31)
    need(len(b) >= offset + 1, "name length missing")
    n = b[offset]
    need(n <= MAX_NAME, "name too long")
    name = b[offset + 1:offset + 1 + n]
    need(len(name) == n and offset + 1 + n == len(b), "name length mismatch")
    need(all(c >= 0x20 and c != 0x7F for c in name), "control char in name")
    try:
        text = name.decode("utf-8")
    except UnicodeDecodeError as error:
        raise WireError("name not utf-8") from error
    return enc_accept(sid, host_time, liveness, age, max_counter, max_pt, entries, text)


def parse_host_time(b, kind):
    need(len(b) == 9 and b[0] == kind, "host-time refusal shape")
    (t,) = struct.unpack_from(">Q", b, 1)
    need(t != 0, "host time zero")
    return struct.pack(">BQ", kind, t)


def parse_stale(b):
    return parse_host_time(b, 0x50)


def parse_too_new(b):
    return parse_host_time(b, 0x51)


def parse_pair_again(b):
    need(bytes(b) == b"\x52", "pair again")
    return enc_pair_again()


def parse_session_busy(b):
    need(len(b) == 5 and b[0] == 0x53, "busy shape")
    (delay,) = struct.unpack_from(">I", b, 1)
    need(delay <= 60000, "busy delay")
    return enc_session_busy(delay)


def parse_tombstone(b):
    need(len(b) == 25 and b[0] == 0x54, "tombstone shape")
    (t,) = struct.unpack_from(">Q", b, 17)
    need(t != 0, "tombstone time zero")
    return enc_tombstone(bytes(b[1:17]), t)


MESSAGE2_KINDS = {0x01: parse_accept, 0x50: parse_stale, 0x51: parse_too_new, 0x52: parse_pair_again,
                  0x53: parse_session_busy, 0x54: parse_tombstone}


def parse_message2_payload(b):
    need(len(b) >= 1, "empty payload")
    parser = MESSAGE2_KINDS.get(b[0])
    need(parser is not None, "unknown kind")
    return parser(b)


def inner_class(inner_type):
    if inner_type < 0x40:
        return 0
    return 1 if inner_type <= 0x45 else 2


def parse_record_header(b):
    need(len(b) == 20, "header length")
    t, v, direction, inner, sid, counter = struct.unpack(">BBBBQQ", bytes(b))
    need(t == 0x03 and v == VERSION, "header type/version")
    need(direction in (0, 1), "direction")
    need(sid != 0, "session id zero")
    need(counter < COUNTER_LIMIT, "counter limit")
    return enc_record_header(direction, inner, sid, counter) + bytes([inner_class(inner)])


def parse_empty(b):
    need(len(b) == 0, "body not empty")
    return b""


def parse_bye(b):
    need(len(b) == 1 and b[0] <= 3, "bye")
    return bytes(b)


def parse_counts_query(b):
    need(len(b) == 4, "counts query")
    return bytes(b)


def parse_counts_answer(b):
    need(len(b) == 44, "counts answer")
    return enc_counts_answer(*struct.unpack(">IQQQQQ", bytes(b)))


def parse_message1(b):
    need(len(b) == 110 and b[0] == 0x01 and b[1] == VERSION, "message 1 framing")
    (attempt,) = struct.unpack_from(">Q", b, 2)
    need(attempt != 0, "attempt zero")
    return bytes(b)


def parse_message2(b):
    need(58 <= len(b) <= 427 and b[0] == 0x02 and b[1] == VERSION, "message 2 framing")
    (attempt,) = struct.unpack_from(">Q", b, 2)
    need(attempt != 0, "attempt zero")
    return bytes(b)


CONTROL_BODY_PARSERS = {0x40: parse_empty, 0x41: parse_bye, 0x42: parse_counts_query,
                        0x43: parse_counts_answer, 0x44: parse_slot_status, 0x45: parse_empty}


def classify_record(inner_type, plaintext):
    """The inner-type rule: application / control / unknown_control / malformed_control."""
    cls = inner_class(inner_type)
    if cls == 0:
        return "application"
    if cls == 2:
        return "unknown_control"
    try:
        CONTROL_BODY_PARSERS[inner_type](plaintext)
        return "control"
    except WireError:
        return "malformed_control"


PARSERS = [
    ("hello", parse_hello),
    ("message2_payload", parse_message2_payload),
    ("accept", parse_accept),
    ("stale", parse_stale),
    ("too_new", parse_too_new),
    ("pair_again", parse_pair_again),
    ("session_busy", parse_session_busy),
    ("tombstone", parse_tombstone),
    ("record_header", parse_record_header),
    ("confirm", parse_empty),
    ("bye", parse_bye),
    ("counts_query", parse_counts_query),
    ("counts_answer", parse_counts_answer),
    ("slot_status", parse_slot_status),
    ("keep_alive", parse_empty),
    ("message1", parse_message1),
    ("message2", parse_message2),
]


class ReplayModel:
    """The window rule of section 3.1 as an ideal set-based model."""

    WIDTH = 4096

    def __init__(self):
        self.seen = set()
        self.last = None

    def would_accept(self, c):
        if c >= COUNTER_LIMIT or c in self.seen:
            return False
        return self.last is None or c > self.last or self.last - c < self.WIDTH

    def mark(self, c):
        if not self.would_accept(c):
            return False
        self.seen.add(c)
        if self.last is None or c > self.last:
            self.last = c
        return True
