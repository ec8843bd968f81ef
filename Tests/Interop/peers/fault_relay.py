"""A TCP relay on 127.0.0.1 for the fault and crash tests: forwards every connection to TARGET_PORT on
127.0.0.1, counts the bytes each way, and injects faults on command.

  fault_relay.py TARGET_PORT

Prints one JSON line {"port": P} once it listens, then reads commands on stdin, one a line, and answers each
with one JSON line of counters {"up": bytes client->server, "down": bytes server->client, "accepted": N,
"resets": N, "held": N}:
  stats           - only the counters
  reset           - closes every open connection with a TCP reset (SO_LINGER 0) on the client's side
  reset-every S   - does `reset` every S seconds from now on (0 stops it)
  blackhole       - stops answering: open and new connections are accepted, nothing is read or sent
  pass            - forwards again (connections held during a blackhole carry on)
  reset-on TEXT   - resets (once) the connection whose next bytes toward the server contain TEXT, before they
                    are forwarded
  freeze-after N  - the first connection to carry more than N bytes toward the server from now on is frozen
                    there: its first N bytes are forwarded, then nothing more either way, and it is never closed
                    (as a phone that changed network leaves it); other connections carry on. Counted in
                    "frozen".
  hold-on TEXT    - holds (once) the bytes toward the server that contain TEXT, and that connection's later ones,
                    until `release`
  release         - forwards what is held
Stops when stdin closes.
"""
import json
import socket
import struct
import sys
import threading
import time

TARGET = ("127.0.0.1", int(sys.argv[1]))
lock = threading.Lock()
counters = {"up": 0, "down": 0, "accepted": 0, "resets": 0, "frozen": 0, "held": 0}
connections = []  # Pair
flowing = threading.Event()
flowing.set()
period = [0.0]
trigger = [None]
freeze_after = [None]
never = threading.Event()
hold = [None]
released = threading.Event()


class Pair:
    """One relayed connection; `reset` marks it for a TCP reset instead of an orderly close."""

    def __init__(self, client, server):
        self.client = client
        self.server = server
        self.reset = False
        self.frozen = False
        self.up = 0


def pump(pair, source, sink, key):
    try:
        while True:
            flowing.wait()
            data = source.recv(65536)
            if not data:
                break
            if pair.frozen:
                never.wait()
            if key == "up":
                with lock:
                    hit = trigger[0] is not None and trigger[0] in data
                    if hit:
                        trigger[0] = None
                        counters["resets"] += 1
                    limit = freeze_after[0]
                    freezes = limit is not None and pair.up + len(data) > limit
                    if freezes:
                        freeze_after[0] = None
                        counters["frozen"] += 1
                        data = data[: max(0, limit - pair.up)]
                    pair.up += len(data)
                if hit:
                    reset_pair(pair)
                    break
                if freezes:
                    sink.sendall(data)
                    with lock:
                        counters[key] += len(data)
                    pair.frozen = True
                    never.wait()
                with lock:
                    held = hold[0] is not None and hold[0] in data
                    if held:
                        hold[0] = None
                        counters["held"] += 1
                if held:
                    released.wait()
            flowing.wait()
            sink.sendall(data)
            with lock:
                counters[key] += len(data)
    except OSError:
        pass
    if pair.frozen:
        never.wait()  # a frozen connection is never closed toward the client, whatever the server does
    if pair.reset:
        # The client socket has SO_LINGER 0: its last close sends the reset.
        for s in (source, sink):
            s.close()
        return
    for s in (source, sink):
        try:
            s.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass


def serve(listener):
    while True:
        client, _ = listener.accept()
        with lock:
            counters["accepted"] += 1
        flowing.wait()
        try:
            server = socket.create_connection(TARGET)
        except OSError:
            reset_one(client)
            continue
        for s in (client, server):
            s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        pair = Pair(client, server)
        with lock:
            connections.append(pair)
        threading.Thread(target=pump, args=(pair, client, server, "up"), daemon=True).start()
        threading.Thread(target=pump, args=(pair, server, client, "down"), daemon=True).start()


def reset_one(client):
    try:
        client.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        client.close()
    except OSError:
        pass


def reset_all():
    with lock:
        open_now = list(connections)
        connections.clear()
        counters["resets"] += 1
    for pair in open_now:
        reset_pair(pair)


def reset_pair(pair):
    # Closing a socket another thread is blocked on does not release it: wake the pumps instead (SHUT_RD sends
    # nothing to the client; the server gets an orderly end), and let them close with linger 0.
    pair.reset = True
    try:
        pair.client.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        pair.client.shutdown(socket.SHUT_RD)
    except OSError:
        pass
    try:
        pair.server.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass


def resetter():
    last = time.monotonic()
    while True:
        time.sleep(0.05)
        if period[0] > 0 and time.monotonic() - last >= period[0]:
            reset_all()
            last = time.monotonic()
        elif period[0] <= 0:
            last = time.monotonic()


listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
listener.bind(("127.0.0.1", 0))
listener.listen(512)
threading.Thread(target=serve, args=(listener,), daemon=True).start()
threading.Thread(target=resetter, daemon=True).start()
print(json.dumps({"port": listener.getsockname()[1]}), flush=True)
for line in sys.stdin:
    words = line.split()
    if not words:
        continue
    if words[0] == "reset":
        reset_all()
    elif words[0] == "reset-every":
        period[0] = float(words[1])
    elif words[0] == "blackhole":
        flowing.clear()
    elif words[0] == "pass":
        flowing.set()
    elif words[0] == "reset-on":
        with lock:
            trigger[0] = words[1].encode()
    elif words[0] == "freeze-after":
        with lock:
            freeze_after[0] = int(words[1])
    elif words[0] == "hold-on":
        released.clear()
        with lock:
            hold[0] = words[1].encode()
    elif words[0] == "release":
        released.set()
    with lock:
        print(json.dumps(counters), flush=True)
