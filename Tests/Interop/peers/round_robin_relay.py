"""A round-robin HTTP/1.1 relay on 127.0.0.1 for the fleet tests: each request a client sends (not each
connection: a client keeps its connection alive) goes to the next receiver in turn, on a connection of its own
(`Connection: close` toward the receiver); a receiver that refuses the connection is skipped for that request.

  round_robin_relay.py PORT [PORT ...]

Prints one JSON line {"port": P} once it listens, then answers each stdin line with one JSON line
{"requests": [N per receiver], "skipped": N refused connections, "failed": N requests no receiver took}.
Stops when stdin closes.

A request's body is forwarded as it arrives (Content-Length or chunked); the response is forwarded until the
receiver closes. When a receiver dies mid-request (or answers before reading the whole body) the client's
connection is closed, as a load balancer does, and the client retries.
"""
import json
import socket
import sys
import threading

TARGETS = [("127.0.0.1", int(port)) for port in sys.argv[1:]]
lock = threading.Lock()
state = {"next": 0, "requests": [0] * len(TARGETS), "skipped": 0, "failed": 0}
HEAD_LIMIT = 1 << 20


class Closed(Exception):
    """The client's connection ended or cannot carry another request."""


class Reader:
    """Buffered reads from the client's socket."""

    def __init__(self, sock):
        self.sock = sock
        self.buffer = b""

    def more(self):
        data = self.sock.recv(262144)
        if not data:
            raise Closed()
        self.buffer += data

    def head(self):
        while b"\r\n\r\n" not in self.buffer:
            if len(self.buffer) > HEAD_LIMIT:
                raise Closed()
            self.more()
        end = self.buffer.index(b"\r\n\r\n") + 4
        head, self.buffer = self.buffer[:end], self.buffer[end:]
        return head

    def take(self, limit):
        if not self.buffer:
            self.more()
        data, self.buffer = self.buffer[:limit], self.buffer[limit:]
        return data

    def line(self):
        while b"\r\n" not in self.buffer:
            self.more()
        end = self.buffer.index(b"\r\n") + 2
        line, self.buffer = self.buffer[:end], self.buffer[end:]
        return line


def parse(head):
    lines = head.split(b"\r\n")
    fields = {}
    kept = [lines[0]]
    for line in lines[1:]:
        if not line:
            continue
        name, _, value = line.partition(b":")
        key = name.strip().lower()
        fields[key] = value.strip()
        if key not in (b"connection", b"keep-alive"):
            kept.append(line)
    kept.append(b"Connection: close")
    return fields, b"\r\n".join(kept) + b"\r\n\r\n"


def connect():
    """The next receiver that accepts a connection, or None."""
    with lock:
        start = state["next"]
        state["next"] = (start + 1) % len(TARGETS)
    for step in range(len(TARGETS)):
        index = (start + step) % len(TARGETS)
        try:
            server = socket.create_connection(TARGETS[index], timeout=5)
        except OSError:
            with lock:
                state["skipped"] += 1
            continue
        server.settimeout(None)
        server.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        with lock:
            state["requests"][index] += 1
            if step > 0:
                state["next"] = (index + 1) % len(TARGETS)
        return server
    return None


def forward_body(reader, fields, server, done):
    """Copies the request body to the receiver; sets done[0] once all of it went through."""
    try:
        if b"chunked" in fields.get(b"transfer-encoding", b"").lower():
            while True:
                line = reader.line()
                server.sendall(line)
                size = int(line.split(b";")[0].strip(), 16)
                if size == 0:
                    while True:
                        trailer = reader.line()
                        server.sendall(trailer)
                        if trailer == b"\r\n":
                            break
                    break
                remaining = size + 2
                while remaining > 0:
                    data = reader.take(remaining)
                    server.sendall(data)
                    remaining -= len(data)
        else:
            remaining = int(fields.get(b"content-length", b"0") or b"0")
            while remaining > 0:
                data = reader.take(remaining)
                server.sendall(data)
                remaining -= len(data)
        done[0] = True
    except (OSError, Closed, ValueError):
        pass


def relay_response(server, client, method):
    """Forwards the receiver's response until it closes. Its `Connection: close` (asked for above) is dropped when
    the response is framed without it, so the client keeps its connection; returns (answered, client kept)."""
    data = b""
    while b"\r\n\r\n" not in data:
        more = server.recv(262144)
        if not more:
            if data:
                client.sendall(data)
            return bool(data), False
        data += more
    end = data.index(b"\r\n\r\n") + 4
    lines = data[:end - 4].split(b"\r\n")
    names = {line.partition(b":")[0].strip().lower() for line in lines[1:]}
    status = lines[0].split(b" ")[1] if len(lines[0].split(b" ")) > 1 else b""
    framed = (b"content-length" in names or b"transfer-encoding" in names or method == b"HEAD"
              or status in (b"204", b"304"))
    if framed:
        kept = [line for line in lines if line.partition(b":")[0].strip().lower() != b"connection"]
        data = b"\r\n".join(kept) + b"\r\n\r\n" + data[end:]
    client.sendall(data)
    while True:
        more = server.recv(262144)
        if not more:
            break
        client.sendall(more)
    return True, framed


def serve(client):
    reader = Reader(client)
    try:
        while True:
            head = reader.head()
            fields, rewritten = parse(head)
            server = connect()
            if server is None:
                with lock:
                    state["failed"] += 1
                client.sendall(b"HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
                return
            done = [False]
            try:
                server.sendall(rewritten)
                pump = threading.Thread(target=forward_body, args=(reader, fields, server, done), daemon=True)
                pump.start()
                answered, keep = relay_response(server, client, head.split(b" ", 1)[0])
                pump.join(timeout=2)
            finally:
                server.close()
            if not answered or not keep or not done[0]:
                return
    except (OSError, Closed):
        pass
    finally:
        try:
            client.close()
        except OSError:
            pass


def accept(listener):
    while True:
        client, _ = listener.accept()
        client.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        threading.Thread(target=serve, args=(client,), daemon=True).start()


listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
listener.bind(("127.0.0.1", 0))
listener.listen(512)
threading.Thread(target=accept, args=(listener,), daemon=True).start()
print(json.dumps({"port": listener.getsockname()[1]}), flush=True)
for _ in sys.stdin:
    with lock:
        print(json.dumps({"requests": state["requests"], "skipped": state["skipped"], "failed": state["failed"]}),
              flush=True)
