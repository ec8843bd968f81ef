"""A secure-session *host* on PyPI `noiseprotocol`, written from docs/SECURE-SESSION.md sections 1 to 6.

It shares no code with the Swift host. It serves on 127.0.0.1 UDP, reads the host's keys from the
state directory the `aether` CLI writes (`host/keys/*.key` in the docs/KEY-STORE.md format and
`host/tombstones`), answers message 1s (section 5.2), commits and promotes sessions (5.3), echoes
application records, sends keep-alives and ends dead sessions (5.4), answers counts queries (5.6) and
ends a session on a BYE. It never sends a BYE, so a client of a host that was stopped and started again
reconnects on its own (5.5).

    session_host.py --state-dir DIR [--port P] [--liveness-ms N] [--no-keepalive]

One JSON object per line on stdout, flushed: `listening` first, then `answer`, `dropped`, `committed`,
`promoted`, `record`, `keepalive_sent`, `keepalive_received`, `counts`, `ended`. Key bytes are never
printed. It exits on SIGTERM, or by itself when its parent process goes away.
"""
import argparse
import hashlib
import json
import os
import re
import select
import signal
import socket
import struct
import sys
import time

from noise.connection import NoiseConnection

import session_wire as w

PROTOCOL = b"Noise_NNpsk0_25519_ChaChaPoly_SHA256"
MAX_SESSION_AGE = 86_400
MAX_COUNTER = (1 << 32) - 1
ANSWER_CACHE_MS = 2_000
UNCOMMITTED_MS = 13_000
DRAIN_MS = 1_000
MAX_UNCOMMITTED_PER_KEY = 7
CAPACITY = 1_024
HELLO_MAX_AGE_MS = 120_000
HELLO_MAX_SKEW_MS = 30_000
BUCKET_BURST = 20
BUCKET_PER_SECOND = 10
ITEM_NAME = re.compile(r"^[0-9a-f]{32}\.key$")
STATE_PENDING, STATE_ACTIVE, STATE_UNLISTED = 1, 2, 3


def log(event, **fields):
    print(json.dumps(dict(event=event, **fields)), flush=True)


def monotonic_ms():
    return int(time.monotonic() * 1000)


def wall_ms():
    return max(1, int(time.time() * 1000))


# ---------- the key store (docs/KEY-STORE.md, file format version 1) ----------

def parse_item(data, host_hex):
    """The entries of one key store item, or raise ValueError naming the damage."""
    if len(data) < 60 or data[:8] != b"AETHKEYS":
        raise ValueError("garbage")
    version, count = struct.unpack_from(">HH", data, 8)
    if version != 1:
        raise ValueError("unsupported version")
    if count > 16 or len(data) != 60 + 64 * count:
        raise ValueError("length")
    if hashlib.sha256(data[:-32]).digest() != data[-32:]:
        raise ValueError("checksum mismatch")
    if data[12:28].hex() != host_hex:
        raise ValueError("other host id")
    entries = []
    for i in range(count):
        entry = data[28 + 64 * i:92 + 64 * i]
        if entry[16] not in (1, 2, 3) or any(entry[17:24]):
            raise ValueError("garbage")
        entries.append({"key_id": entry[:16], "state": entry[16], "psk": entry[32:64]})
    return entries


def set_state_in_item(path, key_id, state):
    """Rewrites one key's state byte and the checksum, atomically (temporary file, fsync, rename)."""
    with open(path, "rb") as handle:
        data = bytearray(handle.read())
    count = struct.unpack_from(">H", data, 10)[0]
    for i in range(count):
        offset = 28 + 64 * i
        if data[offset:offset + 16] == key_id:
            data[offset + 16] = state
    data[-32:] = hashlib.sha256(bytes(data[:-32])).digest()
    directory, name = os.path.split(path)
    temporary = os.path.join(directory, ".%s.%s.tmp" % (name[:32], os.urandom(8).hex()))
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        os.fchmod(fd, 0o600)
        os.write(fd, bytes(data))
        os.fsync(fd)
    finally:
        os.close(fd)
    os.rename(temporary, path)
    dir_fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(dir_fd)
    finally:
        os.close(dir_fd)


def parse_tombstones(data):
    """key id -> retired-at (ms) from a tombstone list (docs/KEY-STORE.md "Tombstone lists, version 1", or the
    strict old text form); raise ValueError naming the damage."""
    if data[:8] == b"AETHTOMB":
        if len(data) < 48:
            raise ValueError("truncated")
        version, reserved, count = struct.unpack_from(">HHI", data, 8)
        if version != 1:
            raise ValueError("unsupported version")
        if reserved != 0 or count > 65_536:
            raise ValueError("garbage")
        if len(data) != 48 + 24 * count:
            raise ValueError("truncated" if len(data) < 48 + 24 * count else "garbage")
        if hashlib.sha256(data[:-32]).digest() != data[-32:]:
            raise ValueError("checksum mismatch")
        entries = [(data[16 + 24 * i:32 + 24 * i], struct.unpack_from(">Q", data, 32 + 24 * i)[0])
                   for i in range(count)]
        if any(a[0] >= b[0] for a, b in zip(entries, entries[1:])):
            raise ValueError("garbage")
        return dict(entries)
    if data and not data.endswith(b"\n"):
        raise ValueError("truncated")
    tombstones = {}
    for line in data.split(b"\n")[:-1]:
        match = re.fullmatch(rb"([0-9a-f]{32}) ([0-9]{1,20})", line)
        if match is None:
            raise ValueError("garbage")
        tombstones[bytes.fromhex(match.group(1).decode())] = int(match.group(2))
    return tombstones


def load_keys(state_dir):
    """key id -> {psk, device, state ('active'|'pending'|'refused'|'retired'), retired_at, path}.

    A tombstone list that cannot be read fails closed: the host does not start (SystemExit)."""
    directory = os.path.join(state_dir, "host", "keys")
    try:
        with open(os.path.join(state_dir, "host", "tombstones"), "rb") as handle:
            tombstones = parse_tombstones(handle.read(48 + 24 * 65_536 + 1))
    except FileNotFoundError:
        tombstones = {}
    except (OSError, ValueError) as error:
        raise SystemExit("the host refuses to start: host/tombstones: %s" % error)
    keys = {}
    for name in sorted(os.listdir(directory)) if os.path.isdir(directory) else []:
        if not ITEM_NAME.match(name):
            continue
        path = os.path.join(directory, name)
        try:
            with open(path, "rb") as handle:
                entries = parse_item(handle.read(1085), name[:32])
        except (OSError, ValueError) as error:
            log("warning", what="damaged host key item", host=name[:32], damage=str(error))
            continue
        for entry in entries:
            key_id = entry["key_id"]
            if key_id in tombstones:
                state = "retired"
            else:
                state = {STATE_PENDING: "pending", STATE_ACTIVE: "active", STATE_UNLISTED: "refused"}[entry["state"]]
            keys[key_id] = {"psk": entry["psk"], "device": name[:32], "state": state,
                            "retired_at": max(1, tombstones.get(key_id, 1)), "path": path}
    return keys


# ---------- sessions ----------

class Session:
    def __init__(self, session_id, key_id, device, intent, conn, address, now):
        self.id = session_id
        self.key_id = key_id
        self.device = device
        self.intent = intent
        self.encrypt = conn.noise_protocol.cipher_state_encrypt
        self.decrypt = conn.noise_protocol.cipher_state_decrypt
        self.window = w.ReplayModel()
        self.next_counter = 0
        self.address = address
        self.phase = "uncommitted"
        self.until = now + UNCOMMITTED_MS
        self.last_received = now
        self.last_sent = now


class Host:
    def __init__(self, args):
        self.state_dir = args.state_dir
        self.liveness = args.liveness_ms
        self.keepalive = not args.no_keepalive
        self.keys = load_keys(args.state_dir)
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.sock.bind(("127.0.0.1", args.port))
        self.sessions = {}
        self.live = {}  # device -> session id
        self.answers = {}  # message 1 bytes -> (message 2 bytes, expires at)
        self.last_timestamp = {}  # key id -> last accepted hello timestamp
        self.buckets = {}  # source ip -> (tokens, refilled at)
        self.counts = {"sealed": 0, "opened": 0, "auth_failures": 0, "replays": 0, "unknown_control": 0}

    # -- output --

    def seal(self, session, inner, plaintext):
        if session.next_counter > MAX_COUNTER:
            return
        header = w.enc_record_header(1, inner, session.id, session.next_counter)
        session.encrypt.set_nonce(session.next_counter)
        session.next_counter += 1
        datagram = header + bytes(session.encrypt.encrypt_with_ad(header, plaintext))
        self.counts["sealed"] += 1
        session.last_sent = monotonic_ms()
        self.sock.sendto(datagram, session.address)

    def slot_entries(self, device):
        """The device's active (1) and pending (2) keys, ascending; refused and retired keys are left out."""
        entries = [(key_id, 1 if key["state"] == "active" else 2) for key_id, key in self.keys.items()
                   if key["device"] == device and key["state"] in ("active", "pending")]
        return sorted(entries)[:16]

    def slot_status(self, device):
        return w.enc_slots(self.slot_entries(device))

    def end(self, session, why):
        self.sessions.pop(session.id, None)
        if self.live.get(session.device) == session.id:
            del self.live[session.device]
        log("ended", session_id=session.id, why=why)

    # -- message 1 (section 5.2) --

    def admit(self, source_ip, now):
        tokens, at = self.buckets.get(source_ip, (BUCKET_BURST, now))
        tokens = min(BUCKET_BURST, tokens + (now - at) * BUCKET_PER_SECOND / 1000)
        if tokens < 1:
            self.buckets[source_ip] = (tokens, now)
            return False
        self.buckets[source_ip] = (tokens - 1, now)
        return True

    def message1(self, data, source, now):
        try:
            w.parse_message1(data)
        except w.WireError:
            return
        if not self.admit(source[0], now):
            return log("dropped", why="rate limit")
        cached = self.answers.get(data)
        if cached and now < cached[1]:
            self.sock.sendto(cached[0], source)
            return log("resent")
        attempt_id = struct.unpack_from(">Q", data, 2)[0]
        key_id = data[10:26]
        key = self.keys.get(key_id)
        if key is None:
            return log("dropped", why="unknown key", key_id=key_id.hex())
        conn = NoiseConnection.from_name(PROTOCOL)
        conn.set_psks(psk=key["psk"])
        conn.set_prologue(w.prologue(attempt_id, key_id))
        conn.set_as_responder()
        conn.start_handshake()
        try:
            hello = bytes(conn.read_message(data[26:]))
            w.parse_hello(hello)
        except Exception:  # a failed DH, tag or hello: no answer (section 5.2 step 5)
            return log("dropped", why="hello", key_id=key_id.hex())
        if hello[12:28] != key_id:
            return log("dropped", why="hello key id", key_id=key_id.hex())
        intent = hello[1]
        timestamp = struct.unpack_from(">Q", hello, 4)[0]
        host_time = wall_ms()
        session = None
        under_key = [s for s in self.sessions.values() if s.phase == "uncommitted" and s.key_id == key_id]
        if key["state"] == "retired":
            kind, payload = "tombstone", w.enc_tombstone(key_id, key["retired_at"])
        elif key["state"] == "refused":
            kind, payload = "pair-again", w.enc_pair_again()
        elif timestamp <= self.last_timestamp.get(key_id, 0) or timestamp < host_time - HELLO_MAX_AGE_MS:
            kind, payload = "stale", w.enc_stale(host_time)
        elif timestamp > host_time + HELLO_MAX_SKEW_MS:
            kind, payload = "too-new", w.enc_too_new(host_time)
        elif len(self.sessions) >= CAPACITY or len(under_key) >= MAX_UNCOMMITTED_PER_KEY:
            soonest = min((s.until for s in under_key), default=now + ANSWER_CACHE_MS)
            kind, payload = "session-busy", w.enc_session_busy(min(max(soonest - now, 0), 60_000))
        else:
            session_id = 0
            while session_id == 0 or session_id in self.sessions:
                session_id = struct.unpack(">Q", os.urandom(8))[0]
            kind = "accept"
            payload = w.enc_accept(session_id, host_time, self.liveness, MAX_SESSION_AGE, MAX_COUNTER,
                                   w.MAX_RECORD_PLAINTEXT, self.slot_entries(key["device"]), "python-host")
            self.last_timestamp[key_id] = timestamp
        message2 = w.message2_header(attempt_id) + bytes(conn.write_message(payload))
        if kind == "accept":
            session = Session(session_id, key_id, key["device"], intent, conn, source, now)
            self.sessions[session_id] = session
        self.answers[data] = (message2, now + ANSWER_CACHE_MS)
        self.sock.sendto(message2, source)
        log("answer", kind=kind, key_id=key_id.hex(), intent=intent, session_id=session.id if session else 0,
            slot_status=self.slot_status(key["device"]).hex() if kind == "accept" else "")

    # -- records (sections 3 and 5.3 to 5.6) --

    def record(self, data, source, now):
        if len(data) < 36 or len(data) - 36 > w.MAX_RECORD_PLAINTEXT:
            return
        header = data[:20]
        try:
            w.parse_record_header(header)
        except w.WireError:
            return
        _, _, direction, inner, session_id, counter = struct.unpack(">BBBBQQ", header)
        session = self.sessions.get(session_id)
        if direction != 0 or session is None:
            return
        if not session.window.would_accept(counter):
            self.counts["replays"] += 1
            return
        session.decrypt.set_nonce(counter)
        try:
            plaintext = bytes(session.decrypt.decrypt_with_ad(header, data[20:]))
        except Exception:  # the tag did not verify: nothing moves
            self.counts["auth_failures"] += 1
            return
        session.window.mark(counter)
        self.counts["opened"] += 1
        content = w.classify_record(inner, plaintext)
        if content in ("unknown_control", "malformed_control"):
            self.counts["unknown_control"] += 1
        session.address = source
        if session.phase == "uncommitted":
            if content not in ("application", "control"):
                return
            self.commit(session, now)
            self.handle_live(session, inner, plaintext, content, confirm_answered=True)
        elif session.phase == "live":
            session.last_received = now
            self.handle_live(session, inner, plaintext, content, confirm_answered=False)
        elif content == "application":
            self.deliver(session, inner, plaintext)
        elif inner == 0x41 and content == "control":
            self.end(session, "bye while draining")

    def commit(self, session, now):
        old = self.sessions.get(self.live.get(session.device))
        if old is not None:
            old.phase, old.until = "draining", now + DRAIN_MS
        session.phase = "live"
        session.last_received = session.last_sent = now
        self.live[session.device] = session.id
        log("committed", session_id=session.id, key_id=session.key_id.hex(), intent=session.intent)
        key = self.keys[session.key_id]
        if session.intent == 0x03 and key["state"] == "pending":
            key["state"] = "active"
            set_state_in_item(key["path"], session.key_id, STATE_ACTIVE)
            log("promoted", key_id=session.key_id.hex())
        self.seal(session, 0x44, self.slot_status(session.device))

    def deliver(self, session, inner, plaintext):
        log("record", session_id=session.id, type=inner, data=plaintext.hex())
        self.seal(session, inner, plaintext)

    def handle_live(self, session, inner, plaintext, content, confirm_answered):
        if content == "application":
            self.deliver(session, inner, plaintext)
        elif content != "control":
            return
        elif inner == 0x40 and not confirm_answered:
            self.seal(session, 0x44, self.slot_status(session.device))
        elif inner == 0x41:
            self.end(session, "bye")
        elif inner == 0x42:
            (query_id,) = struct.unpack(">I", plaintext)
            c = self.counts
            answer = w.enc_counts_answer(query_id, c["sealed"], c["opened"], c["auth_failures"], c["replays"],
                                         c["unknown_control"])
            log("counts", query_id=query_id, **c)
            self.seal(session, 0x43, answer)
        elif inner == 0x45:
            log("keepalive_received", session_id=session.id)

    # -- timers --

    def timers(self, now):
        self.answers = {k: v for k, v in self.answers.items() if now < v[1]}
        for session in list(self.sessions.values()):
            if session.phase in ("uncommitted", "draining") and now >= session.until:
                self.end(session, session.phase)
            elif session.phase == "live":
                if now >= session.last_received + self.liveness:
                    self.end(session, "liveness")
                elif self.keepalive and now >= session.last_sent + self.liveness // 4:
                    self.seal(session, 0x45, b"")
                    log("keepalive_sent", session_id=session.id)

    def run(self):
        parent = os.getppid()
        log("listening", port=self.sock.getsockname()[1], keys=len(self.keys))
        while os.getppid() == parent:
            ready, _, _ = select.select([self.sock], [], [], 0.02)
            now = monotonic_ms()
            if ready:
                data, source = self.sock.recvfrom(65535)
                if len(data) >= 2 and data[1] == w.VERSION:
                    if data[0] == 0x01:
                        self.message1(data, source, now)
                    elif data[0] == 0x03:
                        self.record(data, source, now)
            self.timers(monotonic_ms())


def main():
    # A child of a thread that blocks signals inherits the mask: take SIGTERM back, so `stop` ends us.
    signal.pthread_sigmask(signal.SIG_SETMASK, [])
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    parser = argparse.ArgumentParser()
    parser.add_argument("--state-dir", required=True)
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--liveness-ms", type=int, default=15_000)
    parser.add_argument("--no-keepalive", action="store_true",
                        help="break the keep-alive rule (the test that shows the client needs it)")
    Host(parser.parse_args()).run()


if __name__ == "__main__":
    main()
