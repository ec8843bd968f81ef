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
import uuid

VERSIONS = (6, 8)
directory = sys.argv[1]
uploads_dir = os.path.join(directory, "uploads")
os.makedirs(uploads_dir, exist_ok=True)
uploads = {}
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
            self.answer(204, fields)
            return
        with open(self.path_of(upload), "rb") as stored:
            data = stored.read()
        wanted = upload["repr"] or sha256_field(self.headers.get("Repr-Digest"))
        if wanted is not None and wanted != hashlib.sha256(data).digest():
            self.answer(400, [("Upload-Complete", "?1")])
            return
        upload["complete"] = True
        fields = [("Upload-Complete", "?1"), ("Repr-Digest", digest_field(data))]
        if upload["version"] == 6:
            fields.append(("Upload-Offset", str(upload["offset"])))
        self.answer(201, fields)

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
