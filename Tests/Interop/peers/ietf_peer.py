"""An IETF resumable upload server for the live tests (draft-ietf-httpbis-resumable-upload).

Speaks interop version 6 (draft-05) and 8 (the latest draft), chosen per request by
Upload-Draft-Interop-Version, on 127.0.0.1 with HTTP/1.1. Uploads are stored as files under
<dir>/uploads. Creation URLs are /create/<mode>; the mode picks a behaviour for faults:

  normal     104 with Location, then 201
  limits     Upload-Limit max-size=4096, max-append-size=1024, lifetime 3600 s; 413 beyond them
  foreign    Location on another origin (localhost instead of 127.0.0.1)
  fail104    104 with Location, the content stored, then 500
  huge       a 100 KiB header in the creation answer
  malformed  HEAD answers Upload-Offset: 12abc
  killpatch  the first PATCH stores half its content, then the connection is closed
  conflict   the first PATCH is answered 409 without storing anything

Modes that lie or stall (issue 24; a suffix after a dash, /create/dripcreate-<tag>, keeps one test's state apart):

  wrongdigest           the completing PATCH is answered 200 with the Repr-Digest of other bytes, and the upload
                        is then complete: HEAD says Upload-Complete: ?1, with no digest
  lostcomplete          the completing PATCH completes the upload but its answer is lost (the connection is
                        closed); HEAD then says Upload-Complete: ?1 with no digest
  lostcomplete_digest   the same, and HEAD carries the stored object's Repr-Digest
  lostcomplete_wrong    the same, and HEAD carries the Repr-Digest of other bytes
  dripcreate            the first creation answer of the tag: its 1000-byte body comes at 2 bytes/s (faster than
                        libcurl's low-speed limit of 1 byte/s)
  drippatch             the first append's answer (after storing it) is a head dripped at 1 byte/s
  endless1xx            every creation is answered with 100 Continue, again and again, without end
  refusedigest          stores every append; the completing PATCH is answered 422 with the problem document
                        digest-mismatch (as `aether serve` answers a Repr-Digest its stored bytes do not have), and the
                        upload stays incomplete
  damaged               the first append that carries bytes arrives damaged (its first byte flipped, as a middlebox
                        might): its Content-Digest does not match, so it is answered 422 with the problem document
                        digest-mismatch and nothing is stored (as `aether serve` answers); later appends are stored
  full                  every PATCH that carries bytes is answered 507 Insufficient Storage (its body read, nothing
                        stored), as a server whose disk is full
  hold                  appends are stored as their bytes arrive; while one is in progress another is refused
                        with 409 at once (its body then read and dropped, its connection closed); one whose
                        connection is silent for 45 s is ended
                        and what it brought is kept (the aether receiver ends a stale append after 60 s)

For protocol detection, OPTIONS on these creation URLs answers (creation behaves as normal):

  native           Aether-Capabilities and Upload-Limit (an Aether receiver: native and IETF)
  native-only      Aether-Capabilities alone
  no-options       405 with Allow only
  no-options-ietf  405 with Upload-Draft-Interop-Version: 8

GET /log returns every request seen (method, path, the upload fields). The first stdout line is
{"port": N}; the server exits when stdin closes.
"""

import base64
import hashlib
import http.server
import json
import os
import socket
import socketserver
import sys
import threading
import time
import uuid

VERSIONS = (6, 8)
directory = sys.argv[1]
uploads_dir = os.path.join(directory, "uploads")
os.makedirs(uploads_dir, exist_ok=True)
uploads = {}
dripped = set()  # the modes (with their tag) whose first creation answer was dripped
HOLD_SECONDS = 45
log = []
lock = threading.Lock()
port_holder = {}

LOGGED = (
    "Upload-Draft-Interop-Version",
    "Upload-Complete",
    "Upload-Offset",
    "Upload-Length",
    "Content-Type",
    "Content-Length",
    "Content-Digest",
    "Repr-Digest",
)


def sf_integer(text):
    if text is None:
        return None
    text = text.strip()
    if not text.isdigit() or len(text) > 15:
        return None
    return int(text)


def sf_boolean(text):
    return {"?1": True, "?0": False}.get((text or "").strip())


def sha256_field(text):
    """The sha-256 member of a digest Dictionary, as bytes, or None."""
    for member in (text or "").split(","):
        key, _, value = member.strip().partition("=")
        if key == "sha-256" and value.startswith(":") and value.endswith(":"):
            try:
                return base64.b64decode(value[1:-1], validate=True)
            except ValueError:
                return b""
    return None


def digest_field(data):
    return "sha-256=:" + base64.b64encode(hashlib.sha256(data).digest()).decode() + ":"


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    # Helpers

    def version(self):
        value = sf_integer(self.headers.get("Upload-Draft-Interop-Version"))
        return value if value in VERSIONS else None

    def record(self):
        entry = {"method": self.command, "path": self.path}
        for name in LOGGED:
            if self.headers.get(name) is not None:
                entry[name] = self.headers.get(name)
        with lock:
            log.append(entry)
        return entry

    def read_body(self, limit=None):
        length = int(self.headers.get("Content-Length") or 0)
        if limit is not None:
            length = min(length, limit)
        return self.rfile.read(length) if length else b""

    def send_interim(self, fields):
        lines = ["HTTP/1.1 104 Upload Resumption Supported"]
        lines += ["%s: %s" % item for item in fields]
        self.wfile.write(("\r\n".join(lines) + "\r\n\r\n").encode())
        self.wfile.flush()

    def answer(self, status, fields=(), body=b""):
        self.send_response(status)
        for name, value in fields:
            self.send_header(name, value)
        if status not in (204, 304) and not (100 <= status < 200):
            self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if body and self.command != "HEAD":
            self.wfile.write(body)

    def drip(self, prefix, piece, count, every=1.0):
        """Sends `prefix`, then `piece` `count` times, one every `every` seconds, until the client goes away."""
        try:
            self.wfile.write(prefix)
            self.wfile.flush()
            for _ in range(count):
                time.sleep(every)
                self.wfile.write(piece)
                self.wfile.flush()
        except OSError:
            pass
        self.close_connection = True

    def limit_field(self, upload):
        if upload["mode"] != "limits":
            return None
        lifetime = "expires" if upload["version"] == 6 else "max-age"
        return "max-size=4096, max-append-size=1024, %s=3600" % lifetime

    def upload_for_path(self):
        parts = self.path.split("/")
        if len(parts) != 3 or parts[1] != "uploads":
            return None
        with lock:
            return uploads.get(parts[2])

    def path_of(self, upload):
        return os.path.join(uploads_dir, upload["id"])

    # Methods

    def do_GET(self):
        if self.path == "/log":
            with lock:
                body = json.dumps(log).encode()
            self.answer(200, [("Content-Type", "application/json")], body)
        else:
            self.record()
            self.answer(404)

    def do_OPTIONS(self):
        self.record()
        capabilities = ("Aether-Capabilities", "v=1, min-chunk=262144, max-chunk=67108864, parallel=16")
        if self.path.startswith("/create/native-only"):
            self.answer(204, [capabilities])
        elif self.path.startswith("/create/native"):
            self.answer(204, [capabilities, ("Upload-Limit", "min-size=0")])
        elif self.path.startswith("/create/no-options-ietf"):
            self.answer(405, [("Allow", "POST"), ("Upload-Draft-Interop-Version", "8")])
        elif self.path.startswith("/create/no-options"):
            self.answer(405, [("Allow", "POST")])
        elif self.path.startswith("/create/limits"):
            lifetime = "expires" if self.version() == 6 else "max-age"
            self.answer(204, [("Upload-Limit", "max-size=4096, max-append-size=1024, %s=3600" % lifetime)])
        else:
            self.answer(204, [("Upload-Limit", "min-size=0")])

    def do_POST(self):
        entry = self.record()
        version = self.version()
        mode = self.path[len("/create/") :] if self.path.startswith("/create/") else None
        if version is None or mode is None or sf_boolean(self.headers.get("Upload-Complete")) is None:
            self.read_body()
            self.answer(400)
            return
        if mode.startswith("endless1xx"):
            self.read_body()
            self.drip(b"", b"HTTP/1.1 100 Continue\r\n\r\n", 10 ** 9, every=0)
            return
        length = sf_integer(self.headers.get("Upload-Length"))
        upload_id = uuid.uuid4().hex
        entry["created"] = upload_id
        upload = {"id": upload_id, "version": version, "mode": mode, "offset": 0, "length": length,
                  "complete": False, "patches": 0, "repr": sha256_field(self.headers.get("Repr-Digest"))}
        if mode == "limits" and length is not None and length > 4096:
            self.read_body()
            self.answer(413, [("Upload-Limit", self.limit_field(upload))])
            return
        location = "/uploads/" + upload_id
        if mode == "foreign":
            location = "http://localhost:%d/uploads/%s" % (port_holder["port"], upload_id)
        with lock:
            uploads[upload_id] = upload
        open(self.path_of(upload), "wb").close()
        interim = [("Upload-Draft-Interop-Version", str(version)), ("Location", location)]
        if self.limit_field(upload):
            interim.append(("Upload-Limit", self.limit_field(upload)))
        self.send_interim(interim)
        body = self.read_body()
        if upload["mode"].startswith("damaged") and body and not upload.get("damaged"):
            upload["damaged"] = True
            body = bytes([body[0] ^ 0xFF]) + body[1:]
            if sha256_field(self.headers.get("Content-Digest")) not in (None, hashlib.sha256(body).digest()):
                problem = json.dumps(
                    {"detail": "the append's bytes do not match its sha256 digest", "status": 422,
                     "title": "Digest mismatch", "type": "urn:aether:problem:digest-mismatch"},
                    separators=(",", ":"), sort_keys=True).encode()
                self.answer(422, [("Content-Type", "application/problem+json")], problem)
                return
        expected = sha256_field(self.headers.get("Content-Digest"))
        if expected is not None and expected != hashlib.sha256(body).digest():
            self.answer(400)
            return
        with open(self.path_of(upload), "ab") as stored:
            stored.write(body)
        upload["offset"] = len(body)
        if mode == "fail104":
            self.answer(500)
            return
        fields = [("Location", location), ("Upload-Complete", "?0")]
        if version == 6:
            fields.append(("Upload-Offset", str(upload["offset"])))
        if self.limit_field(upload):
            fields.append(("Upload-Limit", self.limit_field(upload)))
        if mode == "huge":
            fields.append(("X-Filler", "f" * (100 * 1024)))
        with lock:
            drips = mode.startswith("dripcreate") and mode not in dripped
            dripped.add(mode)
        if drips:
            head = "HTTP/1.1 201 Created\r\n" + "".join("%s: %s\r\n" % item for item in fields)
            head += "Content-Type: text/plain\r\nContent-Length: 1000\r\n\r\n"
            self.drip(head.encode(), b"x", 1000, every=0.5)
            return
        self.answer(201, fields)

    def do_HEAD(self):
        self.record()
        upload = self.upload_for_path()
        if upload is None or self.version() is None:
            self.answer(404)
            return
        offset = "12abc" if upload["mode"] == "malformed" else str(upload["offset"])
        fields = [("Upload-Offset", offset), ("Upload-Complete", "?1" if upload["complete"] else "?0"),
                  ("Cache-Control", "no-store")]
        if upload["complete"] and upload["mode"].startswith("lostcomplete_digest"):
            with open(self.path_of(upload), "rb") as stored:
                fields.append(("Repr-Digest", digest_field(stored.read())))
        elif upload["complete"] and upload["mode"].startswith("lostcomplete_wrong"):
            fields.append(("Repr-Digest", digest_field(b"other bytes")))
        if upload["length"] is not None:
            fields.append(("Upload-Length", str(upload["length"])))
        if self.limit_field(upload):
            fields.append(("Upload-Limit", self.limit_field(upload)))
        self.answer(204, fields)

    def do_PATCH(self):
        self.record()
        upload = self.upload_for_path()
        if upload is None or self.version() is None:
            self.read_body()
            self.answer(404)
            return
        if self.headers.get("Content-Type") != "application/partial-upload":
            self.read_body()
            self.answer(415)
            return
        offset = sf_integer(self.headers.get("Upload-Offset"))
        complete = sf_boolean(self.headers.get("Upload-Complete"))
        size = int(self.headers.get("Content-Length") or 0)
        if offset is None or complete is None:
            self.read_body()
            self.answer(400)
            return
        if upload["complete"]:
            self.read_body()
            self.answer(400, [("Upload-Complete", "?1")])
            return
        upload["patches"] += 1
        if upload["mode"].startswith("hold"):
            self.held_patch(upload, offset, size, complete)
            return
        if upload["mode"] == "conflict" and upload["patches"] == 1:
            self.read_body()
            self.answer(409, [("Upload-Offset", str(upload["offset"])), ("Upload-Complete", "?0")])
            return
        if offset != upload["offset"]:
            self.read_body()
            self.answer(409, [("Upload-Offset", str(upload["offset"])), ("Upload-Complete", "?0")])
            return
        if upload["mode"] == "limits" and size > 1024:
            self.read_body()
            self.answer(413, [("Upload-Limit", self.limit_field(upload))])
            return
        if upload["mode"].startswith("full") and size > 0:
            self.read_body()
            self.answer(507, [("Upload-Complete", "?0")])
            return
        if upload["length"] is not None and offset + size > upload["length"]:
            self.read_body()
            self.answer(400)
            return
        if upload["mode"] == "killpatch" and upload["patches"] == 1 and size > 1:
            half = self.read_body(size // 2)
            with open(self.path_of(upload), "ab") as stored:
                stored.write(half)
            upload["offset"] += len(half)
            self.close_connection = True
            self.connection.shutdown(socket.SHUT_RDWR)
            return
        body = self.read_body()
        if upload["mode"].startswith("damaged") and body and not upload.get("damaged"):
            upload["damaged"] = True
            body = bytes([body[0] ^ 0xFF]) + body[1:]
            if sha256_field(self.headers.get("Content-Digest")) not in (None, hashlib.sha256(body).digest()):
                problem = json.dumps(
                    {"detail": "the append's bytes do not match its sha256 digest", "status": 422,
                     "title": "Digest mismatch", "type": "urn:aether:problem:digest-mismatch"},
                    separators=(",", ":"), sort_keys=True).encode()
                self.answer(422, [("Content-Type", "application/problem+json")], problem)
                return
        expected = sha256_field(self.headers.get("Content-Digest"))
        if expected is not None and expected != hashlib.sha256(body).digest():
            self.answer(400, [("Upload-Complete", "?0")])
            return
        with open(self.path_of(upload), "ab") as stored:
            stored.write(body)
        upload["offset"] += len(body)
        if not complete:
            fields = [("Upload-Offset", str(upload["offset"]))] if upload["version"] == 6 else []
            fields.append(("Upload-Complete", "?0"))
            if upload["mode"].startswith("drippatch") and not upload.get("dripped"):
                upload["dripped"] = True
                self.drip(b"HTTP/1.1 204 No Content\r\nX-Drip: ", b"d", 1000)
                return
            self.answer(204, fields)
            return
        with open(self.path_of(upload), "rb") as stored:
            data = stored.read()
        wanted = upload["repr"] or sha256_field(self.headers.get("Repr-Digest"))
        if upload["mode"].startswith("refusedigest"):
            problem = json.dumps(
                {"detail": "the object's SHA-256 is not the expected one", "status": 422, "title": "Digest mismatch",
                 "type": "urn:aether:problem:digest-mismatch"}, separators=(",", ":"), sort_keys=True).encode()
            self.answer(422, [("Content-Type", "application/problem+json")], problem)
            return
        if wanted is not None and wanted != hashlib.sha256(data).digest():
            self.answer(400, [("Upload-Complete", "?1")])
            return
        upload["complete"] = True
        if upload["mode"].startswith("lostcomplete"):
            self.close_connection = True
            self.connection.shutdown(socket.SHUT_RDWR)
            return
        if upload["mode"].startswith("wrongdigest"):
            data = b"other bytes"
        fields = [("Upload-Complete", "?1"), ("Repr-Digest", digest_field(data))]
        if upload["version"] == 6:
            fields.append(("Upload-Offset", str(upload["offset"])))
        self.answer(200 if upload["mode"].startswith("wrongdigest") else 201, fields)

    def held_patch(self, upload, offset, size, complete):
        """`hold` mode: one append at a time, stored as it arrives, a silent one ended after HOLD_SECONDS."""
        with lock:
            busy = upload.get("busy", False) or offset != upload["offset"]
            if not busy:
                upload["busy"] = True
        if busy:
            # Refused before its body is read; the body is then read and dropped (closing on unread bytes would
            # reset the connection under the answer), and the connection closed.
            self.close_connection = True
            self.answer(409, [("Upload-Offset", str(upload["offset"])), ("Upload-Complete", "?0")])
            self.wfile.flush()
            self.connection.settimeout(10)
            try:
                remaining = size
                while remaining > 0:
                    chunk = self.rfile.read1(min(remaining, 65536))
                    if not chunk:
                        break
                    remaining -= len(chunk)
            except OSError:
                pass
            return
        try:
            self.connection.settimeout(HOLD_SECONDS)
            remaining = size
            with open(self.path_of(upload), "ab") as stored:
                while remaining > 0:
                    try:
                        chunk = self.rfile.read1(min(remaining, 65536))
                    except OSError:
                        break
                    if not chunk:
                        break
                    stored.write(chunk)
                    stored.flush()
                    with lock:
                        upload["offset"] += len(chunk)
                    remaining -= len(chunk)
            if remaining > 0:
                self.close_connection = True
                return
            if complete:
                upload["complete"] = True
                with open(self.path_of(upload), "rb") as stored:
                    data = stored.read()
                self.answer(201, [("Upload-Complete", "?1"), ("Repr-Digest", digest_field(data))])
            else:
                self.answer(204, [("Upload-Complete", "?0")])
        finally:
            with lock:
                upload["busy"] = False

    def do_DELETE(self):
        self.record()
        upload = self.upload_for_path()
        if upload is None:
            self.answer(404)
            return
        with lock:
            uploads.pop(upload["id"], None)
        os.remove(self.path_of(upload))
        self.answer(204)


class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    # The default accept backlog of 5 overflowed when the parallel test run opened connections faster than the
    # server accepted them (a request cut before it was read, seen as a reset by the client).
    request_queue_size = 128


def main():
    server = Server(("127.0.0.1", 0), Handler)
    port_holder["port"] = server.server_address[1]
    threading.Thread(target=server.serve_forever, daemon=True).start()
    print(json.dumps({"port": server.server_address[1]}), flush=True)
    sys.stdin.read()
    server.shutdown()


if __name__ == "__main__":
    main()
