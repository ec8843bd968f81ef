"""A tus or IETF client on raw sockets that stretches an upload's lifecycle, timed by its own clock (so a busy test
process cannot stretch the gaps between its requests). One JSON object on stdin, one on stdout.

{"mode": "slow", "port": P, "protocol": "tus"|"ietf", "file": PATH, "pieces": N, "interval": S,
 "probe_every": K}
    Creates an upload of the file's size and at once sends one PATCH of the whole file, in N pieces S seconds
    apart, with a HEAD on another connection after every K pieces. Right after the PATCH starts it also creates a
    second upload with 3 bytes in its creation request, which then stays idle.
    -> {"path", "idle_path", "idle_created": status, "heads": [status...], "patch": {"status", "headers"},
        "seconds": body time}

{"mode": "frozen", "port": P, "protocol": ..., "file": PATH, "send": N, "store": DIR}
    Creates an upload; sends a PATCH of the whole file but only its first N bytes, then freezes (the socket stays
    open, nothing more is sent). Once the receiver's store (DIR, its --dir) holds some of those bytes in the
    upload's stream, as the same client's retry, a HEAD and a PATCH of the rest from the answered offset, timed
    together; then closes the frozen socket.
    -> {"path", "head": {...}, "patch": {...}, "seconds": HEAD + PATCH time}
"""
import json
import os
import socket
import sys
import time


def headers(protocol, kind, offset=0, size=0):
    if protocol == "tus":
        common = [("Tus-Resumable", "1.0.0")]
        if kind == "create":
            return common + [("Upload-Length", str(size))]
        if kind == "create-with-body":
            return common + [("Upload-Length", str(size)), ("Content-Type", "application/offset+octet-stream")]
        if kind == "append":
            return common + [("Upload-Offset", str(offset)), ("Content-Type", "application/offset+octet-stream")]
        return common
    common = [("Upload-Draft-Interop-Version", "8")]
    if kind in ("create", "create-with-body"):
        return common + [("Upload-Complete", "?0"), ("Upload-Length", str(size))]
    if kind == "append":
        return common + [
            ("Upload-Offset", str(offset)), ("Upload-Complete", "?1"), ("Content-Type", "application/partial-upload"),
        ]
    return common


def connect(port):
    sock = socket.create_connection(("127.0.0.1", port), timeout=120)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return sock


def head_bytes(method, path, port, fields, length):
    lines = [f"{method} {path} HTTP/1.1", f"Host: 127.0.0.1:{port}", "Connection: close"]
    if length is not None:
        lines.append(f"Content-Length: {length}")
    lines += [f"{name}: {value}" for name, value in fields]
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")


def response(sock):
    data = b""
    while b"\r\n\r\n" not in data:
        more = sock.recv(65536)
        if not more:
            break
        data += more
    head = data.split(b"\r\n\r\n")[0].decode("latin-1").split("\r\n")
    fields = {}
    for line in head[1:]:
        name, _, value = line.partition(":")
        fields[name.strip().lower()] = value.strip()
    status = int(head[0].split()[1]) if head and len(head[0].split()) > 1 else 0
    return {"status": status, "headers": fields}


def request(port, method, path, fields, body=None):
    sock = connect(port)
    try:
        sock.sendall(head_bytes(method, path, port, fields, None if body is None else len(body)) + (body or b""))
        return response(sock)
    finally:
        sock.close()


def create(port, protocol, size):
    answer = request(port, "POST", "/uploads", headers(protocol, "create", size=size), b"")
    return answer["headers"].get("location")


def slow(order):
    port, protocol = order["port"], order["protocol"]
    with open(order["file"], "rb") as source:
        content = source.read()
    path = create(port, protocol, len(content))
    patch = connect(port)
    patch.sendall(head_bytes("PATCH", path, port, headers(protocol, "append", offset=0), len(content)))
    idle = request(port, "POST", "/uploads", headers(protocol, "create-with-body", size=100), b"\x01\x02\x03")
    pieces = order["pieces"]
    size = len(content) // pieces
    heads = []
    started = time.monotonic()
    for index in range(pieces):
        end = len(content) if index == pieces - 1 else (index + 1) * size
        patch.sendall(content[index * size:end])
        time.sleep(order["interval"])
        if index % order["probe_every"] == order["probe_every"] - 1:
            heads.append(request(port, "HEAD", path, headers(protocol, "head"))["status"])
    seconds = time.monotonic() - started
    answer = response(patch)
    patch.close()
    return {
        "path": path, "idle_path": idle["headers"].get("location"), "idle_created": idle["status"], "heads": heads,
        "patch": answer, "seconds": seconds,
    }


def frozen(order):
    port, protocol = order["port"], order["protocol"]
    with open(order["file"], "rb") as source:
        content = source.read()
    path = create(port, protocol, len(content))
    stale = connect(port)
    stale.sendall(head_bytes("PATCH", path, port, headers(protocol, "append", offset=0), len(content)))
    stale.sendall(content[:order["send"]])
    # The link stays silent from here. The retry starts once the receiver wrote some of the bytes into the upload's
    # stream file, so the stale append is surely the one holding the upload.
    stream = os.path.join(order["store"], "streams", path.rsplit("/", 1)[-1])
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and (not os.path.exists(stream) or os.path.getsize(stream) == 0):
        time.sleep(0.01)
    started = time.monotonic()
    status = request(port, "HEAD", path, headers(protocol, "head"))
    offset = int(status["headers"].get("upload-offset", "-1"))
    answer = request(port, "PATCH", path, headers(protocol, "append", offset=offset), content[offset:])
    seconds = time.monotonic() - started
    stale.close()
    return {"path": path, "head": status, "patch": answer, "seconds": seconds}


def main():
    order = json.loads(sys.stdin.read())
    result = slow(order) if order["mode"] == "slow" else frozen(order)
    print(json.dumps(result))


main()
