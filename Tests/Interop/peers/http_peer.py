"""HTTP peers for the HTTP client's tests, all on 127.0.0.1 with ports the kernel picks.

- plain: hypercorn (HTTP/1.1 and h2c with prior knowledge); the ASGI app below.
- tls: hypercorn with a leaf under a test intermediate under a test root (ALPN h2 and http/1.1).
- expired: the same app behind an expired leaf of the same intermediate.
- raw: a hand-written socket server for what a conforming framework will not send: 1xx informational
  responses, a body cut short, huge headers, silence, a proxy's absolute-form target; answers dripped a byte at
  a time (/drip-head, /drip-body), 1xx answers without end (/endless-1xx?every=S), a body read slowly before a
  prompt answer (/slow-read?rate=B).
- h2raw: h2c with prior knowledge on the `h2` state machine (hypercorn's own dependency), answering every request
  with a 104 and a 103 informational HEADERS frame before the final 201: 1xx over HTTP/2.

The PKI is made at start with `cryptography` in the directory given as argv[1]: root.pem (the trust anchor),
intermediate.pem, other.pem (an unrelated CA, for a pin that matches nothing), leaf.pem.
Prints one JSON line with the ports, then serves until stdin closes.
"""
import asyncio
import datetime
import hashlib
import json
import os
import socket
import sys
import threading
import time

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID
from hypercorn.asyncio import serve
from hypercorn.config import Config


def make_pki(directory):
    now = datetime.datetime.now(datetime.timezone.utc)

    def cert(subject, key, issuer_name, issuer_key, ca, not_before, not_after):
        builder = (
            x509.CertificateBuilder()
            .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, subject)]))
            .issuer_name(issuer_name)
            .public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(not_before)
            .not_valid_after(not_after)
        )
        if ca:
            builder = builder.add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
            builder = builder.add_extension(
                x509.KeyUsage(False, False, False, False, False, True, True, False, False), critical=True
            )
        else:
            builder = builder.add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
            builder = builder.add_extension(
                x509.SubjectAlternativeName(
                    [x509.DNSName("localhost"), x509.IPAddress(__import__("ipaddress").ip_address("127.0.0.1"))]
                ),
                critical=False,
            )
            builder = builder.add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
        return builder.sign(issuer_key, hashes.SHA256())

    def key():
        return ec.generate_private_key(ec.SECP256R1())

    def write(name, *objects):
        with open(os.path.join(directory, name), "wb") as f:
            for o in objects:
                if isinstance(o, x509.Certificate):
                    f.write(o.public_bytes(serialization.Encoding.PEM))
                else:
                    f.write(
                        o.private_bytes(
                            serialization.Encoding.PEM,
                            serialization.PrivateFormat.PKCS8,
                            serialization.NoEncryption(),
                        )
                    )

    day = datetime.timedelta(days=1)
    root_key, int_key, other_key, leaf_key, old_key = key(), key(), key(), key(), key()
    root_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "Aether HTTP Test Root")])
    root = cert("Aether HTTP Test Root", root_key, root_name, root_key, True, now - day, now + 2 * day)
    inter = cert("Aether HTTP Test Intermediate", int_key, root.subject, root_key, True, now - day, now + 2 * day)
    other = cert("Aether HTTP Other CA", other_key, root.subject, root_key, True, now - day, now + 2 * day)
    leaf = cert("localhost", leaf_key, inter.subject, int_key, False, now - day, now + 2 * day)
    expired = cert("localhost", old_key, inter.subject, int_key, False, now - 10 * day, now - 5 * day)
    write("root.pem", root)
    write("intermediate.pem", inter)
    write("other.pem", other)
    write("leaf.pem", leaf)
    write("server-chain.pem", leaf, inter)
    write("server.key", leaf_key)
    write("expired-chain.pem", expired, inter)
    write("expired.key", old_key)


async def app(scope, receive, send):
    if scope["type"] == "lifespan":
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                await send({"type": "lifespan.shutdown.complete"})
                return
    if scope["type"] != "http":
        return
    digest = hashlib.sha256()
    length = 0
    more = True
    while more:
        message = await receive()
        if message["type"] == "http.disconnect":
            return
        body = message.get("body", b"")
        digest.update(body)
        length += len(body)
        more = message.get("more_body", False)
    headers = {}
    for name, value in scope["headers"]:
        headers.setdefault(name.decode("latin-1").lower(), value.decode("latin-1"))
    path = scope["path"]
    query = dict(p.split("=", 1) for p in scope["query_string"].decode().split("&") if "=" in p)
    if scope["method"] == "OPTIONS" and path in ("*", ""):
        await send({"type": "http.response.start", "status": 204, "headers": [(b"allow", b"GET, PUT, POST")]})
        await send({"type": "http.response.body", "body": b""})
        return
    if path == "/wait":
        await asyncio.sleep(float(query.get("seconds", "30")))
    if path == "/bytes":
        size = int(query.get("n", "0"))
        body = bytes(i % 251 for i in range(size))
    else:
        body = json.dumps(
            {
                "method": scope["method"],
                "path": path,
                "length": length,
                "sha256": digest.hexdigest(),
                "client_port": scope["client"][1] if scope.get("client") else None,
                "http_version": scope["http_version"],
                "expect": headers.get("expect"),
                "content_length": headers.get("content-length"),
                "transfer_encoding": headers.get("transfer-encoding"),
                "x_test": headers.get("x-test"),
            }
        ).encode()
    await send(
        {
            "type": "http.response.start",
            "status": 200,
            "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())],
        }
    )
    await send({"type": "http.response.body", "body": body})


# --- the raw server --------------------------------------------------------------------------------

closed_ids = set()
arrived_ids = set()
closed_lock = threading.Lock()


def read_head(conn):
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = conn.recv(65536)
        if not chunk:
            return None, b""
        data += chunk
    head, rest = data.split(b"\r\n\r\n", 1)
    return head.decode("latin-1"), rest


def raw_connection(conn):
    with conn:
        head, rest = read_head(conn)
        if head is None:
            return
        lines = head.split("\r\n")
        method, target, _ = lines[0].split(" ", 2)
        headers = {}
        for line in lines[1:]:
            name, _, value = line.partition(":")
            headers[name.strip().lower()] = value.strip()
        path, _, query_text = target.partition("?")
        query = dict(p.split("=", 1) for p in query_text.split("&") if "=" in p)
        expected = int(headers.get("content-length", "0"))
        if path == "/slow-read":
            # Reads the body at about `rate` bytes a second through a small receive buffer (so the client's bytes
            # wait in its own send queue, not acknowledged here), then answers at once.
            rate = int(query.get("rate", "524288"))
            conn.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 32768)
            received = len(rest)
            step = max(1, rate // 20)
            while received < expected:
                chunk = conn.recv(min(step, expected - received))
                if not chunk:
                    return
                received += len(chunk)
                time.sleep(len(chunk) / rate)
            conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok")
            return
        if path == "/close-during-upload":
            received = len(rest)
            while received < 65536:
                chunk = conn.recv(65536)
                if not chunk:
                    break
                received += len(chunk)
            conn.shutdown(socket.SHUT_RDWR)
            return
        body = rest
        while len(body) < expected:
            chunk = conn.recv(65536)
            if not chunk:
                return
            body += chunk
        if target.startswith("http://"):
            reply = target.encode()
            conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s" % (len(reply), reply))
        elif path == "/informational":
            conn.sendall(
                b"HTTP/1.1 104 Upload Resumption Supported\r\nUpload-Draft-Interop-Version: 6\r\n"
                b"Location: /uploads/7\r\n\r\n"
                b"HTTP/1.1 103 Early Hints\r\nLink: </style.css>; rel=preload\r\n\r\n"
                b"HTTP/1.1 201 Created\r\nLocation: /uploads/7\r\nUpload-Offset: %d\r\nContent-Length: 2\r\n"
                b"Connection: close\r\n\r\nok" % len(body)
            )
        elif path in ("/drip-head", "/drip-body", "/endless-1xx"):
            # A byte (or a 100 Continue) every `every` seconds for at most two minutes, then the connection is
            # closed: a client without answer deadlines waits that long, one with them gives up first.
            every = float(query.get("every", "0.5"))
            if path == "/drip-head":
                prefix, piece = b"HTTP/1.1 201 Created\r\nLocation: /uploads/9\r\nX-Drip: ", b"d"
            elif path == "/drip-body":
                prefix, piece = b"HTTP/1.1 200 OK\r\nContent-Length: 100000\r\n\r\n", b"b"
            else:
                prefix, piece = b"", b"HTTP/1.1 100 Continue\r\n\r\n"
            ends = time.monotonic() + 120
            try:
                conn.sendall(prefix)
                while time.monotonic() < ends:
                    conn.sendall(piece)
                    if every > 0:
                        time.sleep(every)
            except OSError:
                pass
        elif path == "/close-mid-body":
            conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 100000\r\n\r\n" + b"x" * 1000)
            conn.shutdown(socket.SHUT_RDWR)
        elif path == "/huge-headers":
            count = int(query.get("count", "100"))
            fields = b"".join(b"X-Filler-%d: %s\r\n" % (i, b"a" * 1000) for i in range(count))
            conn.sendall(b"HTTP/1.1 200 OK\r\n" + fields + b"Content-Length: 0\r\nConnection: close\r\n\r\n")
        elif path == "/huge-line":
            size = int(query.get("size", "204800"))
            conn.sendall(
                b"HTTP/1.1 200 OK\r\nX-Huge: " + b"b" * size + b"\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
            )
        elif path == "/garbage":
            conn.sendall(b"HTTP/1.1 200 OK\r\nthis line has no colon\r\nContent-Length: 0\r\n\r\n")
        elif path in ("/silent", "/trickle"):
            with closed_lock:
                arrived_ids.add(query.get("id", ""))
            if path == "/trickle":
                conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nx")
            conn.settimeout(60)
            try:
                while conn.recv(65536):
                    pass
            except OSError:
                pass
            with closed_lock:
                closed_ids.add(query.get("id", ""))
        elif path == "/events":
            with closed_lock:
                ident = query.get("id", "")
                state = b"closed" if ident in closed_ids else b"open" if ident in arrived_ids else b"unseen"
            conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s" % (len(state), state))
        else:
            conn.sendall(b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")


def h2_connection(conn):
    import h2.config
    import h2.connection
    import h2.events

    machine = h2.connection.H2Connection(config=h2.config.H2Configuration(client_side=False, header_encoding="utf-8"))
    machine.initiate_connection()
    conn.sendall(machine.data_to_send())
    received = {}
    with conn:
        while True:
            data = conn.recv(65536)
            if not data:
                return
            for event in machine.receive_data(data):
                if isinstance(event, h2.events.RequestReceived):
                    received[event.stream_id] = 0
                elif isinstance(event, h2.events.DataReceived):
                    received[event.stream_id] = received.get(event.stream_id, 0) + len(event.data)
                    machine.acknowledge_received_data(event.flow_controlled_length, event.stream_id)
                elif isinstance(event, h2.events.StreamEnded):
                    stream = event.stream_id
                    machine.send_headers(
                        stream,
                        [(":status", "104"), ("upload-draft-interop-version", "6"), ("location", "/uploads/7")],
                    )
                    machine.send_headers(stream, [(":status", "103"), ("link", "</style.css>; rel=preload")])
                    machine.send_headers(
                        stream,
                        [
                            (":status", "201"),
                            ("location", "/uploads/7"),
                            ("upload-offset", str(received.pop(stream, 0))),
                            ("content-length", "2"),
                        ],
                    )
                    machine.send_data(stream, b"ok", end_stream=True)
            conn.sendall(machine.data_to_send())


def h2_server(listener):
    while True:
        conn, _ = listener.accept()
        threading.Thread(target=h2_connection, args=(conn,), daemon=True).start()


def raw_server(listener):
    while True:
        conn, _ = listener.accept()
        threading.Thread(target=raw_connection, args=(conn,), daemon=True).start()


def listener():
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    sock.listen(128)
    return sock


async def main():
    directory = sys.argv[1]
    make_pki(directory)
    socks = {name: listener() for name in ("plain", "tls", "expired", "raw", "h2raw")}
    ports = {name: sock.getsockname()[1] for name, sock in socks.items()}
    unused = listener()
    ports["closed"] = unused.getsockname()[1]
    unused.close()
    threading.Thread(target=raw_server, args=(socks.pop("raw"),), daemon=True).start()
    threading.Thread(target=h2_server, args=(socks.pop("h2raw"),), daemon=True).start()

    configs = []
    for name, cert, key in (
        ("plain", None, None),
        ("tls", "server-chain.pem", "server.key"),
        ("expired", "expired-chain.pem", "expired.key"),
    ):
        config = Config()
        config.bind = ["fd://%d" % socks[name].detach()]
        config.h2_max_concurrent_streams = 128
        config.keep_alive_timeout = 60
        config.accesslog = None
        config.errorlog = None
        if cert:
            config.certfile = os.path.join(directory, cert)
            config.keyfile = os.path.join(directory, key)
        configs.append(config)

    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    loop.add_reader(sys.stdin.fileno(), lambda: stop.set() if not os.read(sys.stdin.fileno(), 4096) else None)
    print(json.dumps(ports), flush=True)
    await asyncio.gather(*(serve(app, config, shutdown_trigger=stop.wait) for config in configs))


if __name__ == "__main__":
    asyncio.run(main())
