"""tus 1.0 peers for the tus backend's tests, on 127.0.0.1 with ports the kernel picks.

- tuspyserver: the FastAPI tus router (PyPI `tuspyserver`) in the app file the test wrote to argv[1]
  (`app.py`, variable `app`), served by uvicorn on a socket bound here.
- checksum: a small tus server of our own on http.server, because tuspyserver offers no checksum extension.
  It checks `Upload-Checksum` (sha1, crc32), stores uploads under argv[1]/checksum/<id>, logs every request
  (GET /log) and has one mode per first path segment:
    sha1, crc32  - offers that algorithm (crc32 mode offers crc32 only); a PATCH body without a checksum is 400
    corrupt      - flips the first byte of every body before checking it (bytes changed on the way): 460
    v2           - speaks tus 2.0.0 only: OPTIONS lists it, every other request is 412
    limit        - a POST over 1000 bytes is 413 (no Tus-Max-Size announced)
    evil         - the creation Location points to another origin (localhost instead of 127.0.0.1)
    relative     - the creation Location is a relative reference
    lengthlie    - HEAD reports an Upload-Length 7 bytes longer than the one created (the only receipt tus has:
                   a server that says it holds another object than the one sent)
Prints one JSON line with the ports, then serves until stdin closes.
"""
import base64
import hashlib
import http.server
import importlib.util
import json
import os
import socket
import sys
import threading
import uuid
import zlib

import uvicorn

DIRECTORY = sys.argv[1]
STORE = os.path.join(DIRECTORY, "checksum")
os.makedirs(STORE, exist_ok=True)
LOCK = threading.Lock()
UPLOADS = {}
LOG = []


class ChecksumServer(http.server.ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 128  # the default 5 overflows when the parallel tests connect at once


class ChecksumHandler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def reply(self, status, headers=None, body=b""):
        self.send_response(status)
        self.send_header("Tus-Resumable", "1.0.0")
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if body and self.command != "HEAD":
            self.wfile.write(body)

    def body(self):
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length else b""

    def record(self, body):
        names = ["Tus-Resumable", "Content-Type", "Upload-Length", "Upload-Offset", "Upload-Checksum",
                 "Upload-Metadata", "Upload-Concat"]
        with LOCK:
            LOG.append({"method": self.command, "path": self.path, "length": len(body),
                        "headers": {n: self.headers.get(n) for n in names if self.headers.get(n) is not None}})

    def mode(self):
        parts = [p for p in self.path.split("/") if p]
        return (parts[0] if parts else ""), (parts[1] if len(parts) > 1 else None)

    def algorithms(self, mode):
        return "crc32" if mode == "crc32" else "sha1,md5,crc32"

    def check(self, mode, data):
        """None when the body may be stored, else the error status."""
        if mode == "corrupt" and data:
            data = bytes([data[0] ^ 0xFF]) + data[1:]
        header = self.headers.get("Upload-Checksum")
        if header is None:
            return 400 if data else None
        name, _, value = header.partition(" ")
        if name not in self.algorithms(mode).split(","):
            return 400
        if name == "sha1":
            digest = hashlib.sha1(data).digest()
        elif name == "crc32":
            digest = zlib.crc32(data).to_bytes(4, "big")
        else:
            digest = hashlib.md5(data).digest()
        return None if base64.b64encode(digest).decode() == value else 460

    def store(self, upload_id, data):
        with open(os.path.join(STORE, upload_id), "ab") as f:
            f.write(data)
        UPLOADS[upload_id]["offset"] += len(data)

    def do_GET(self):
        if self.path == "/log":
            with LOCK:
                body = json.dumps(LOG).encode()
            self.reply(200, {"Content-Type": "application/json"}, body)
        else:
            self.reply(404)

    def do_OPTIONS(self):
        mode, _ = self.mode()
        self.body()
        self.record(b"")
        version = "2.0.0" if mode == "v2" else "1.0.0"
        self.reply(204, {"Tus-Version": version, "Tus-Checksum-Algorithm": self.algorithms(mode),
                         "Tus-Extension": "creation,creation-with-upload,termination,checksum"})

    def refuse_version(self, mode):
        if mode == "v2" or self.headers.get("Tus-Resumable") != "1.0.0":
            self.reply(412, {"Tus-Version": "2.0.0" if mode == "v2" else "1.0.0"})
            return True
        return False

    def do_POST(self):
        mode, _ = self.mode()
        data = self.body()
        self.record(data)
        if self.refuse_version(mode):
            return
        length = int(self.headers.get("Upload-Length"))
        if mode == "limit" and length > 1000:
            return self.reply(413)
        if data:
            status = self.check(mode, data)
            if status:
                return self.reply(status)
        upload_id = uuid.uuid4().hex
        with LOCK:
            UPLOADS[upload_id] = {"length": length, "offset": 0}
            open(os.path.join(STORE, upload_id), "wb").close()
            self.store(upload_id, data)
            offset = UPLOADS[upload_id]["offset"]
        host = self.headers.get("Host")
        if mode == "evil":
            location = "http://localhost:%s/evil/%s" % (host.rsplit(":", 1)[1], upload_id)
        elif mode == "relative":
            location = upload_id
        else:
            location = "http://%s/%s/%s" % (host, mode, upload_id)
        headers = {"Location": location}
        if data:
            headers["Upload-Offset"] = str(offset)
        self.reply(201, headers)

    def do_HEAD(self):
        mode, upload_id = self.mode()
        self.record(b"")
        if self.refuse_version(mode):
            return
        with LOCK:
            upload = UPLOADS.get(upload_id)
        if upload is None:
            return self.reply(404)
        length = upload["length"] + (7 if mode == "lengthlie" else 0)
        self.reply(200, {"Upload-Offset": str(upload["offset"]), "Upload-Length": str(length),
                         "Cache-Control": "no-store"})

    def do_PATCH(self):
        mode, upload_id = self.mode()
        data = self.body()
        self.record(data)
        if self.refuse_version(mode):
            return
        with LOCK:
            upload = UPLOADS.get(upload_id)
            if upload is None:
                return self.reply(404)
            if self.headers.get("Content-Type") != "application/offset+octet-stream":
                return self.reply(415)
            if int(self.headers.get("Upload-Offset")) != upload["offset"]:
                return self.reply(409)
            if upload["offset"] + len(data) > upload["length"]:
                return self.reply(400)
            status = self.check(mode, data)
            if status:
                return self.reply(status)
            self.store(upload_id, data)
            offset = upload["offset"]
        self.reply(204, {"Upload-Offset": str(offset)})

    def do_DELETE(self):
        mode, upload_id = self.mode()
        self.record(b"")
        with LOCK:
            upload = UPLOADS.pop(upload_id, None)
        if upload is None:
            return self.reply(404)
        os.remove(os.path.join(STORE, upload_id))
        self.reply(204)


def main():
    spec = importlib.util.spec_from_file_location("tus_app", os.path.join(DIRECTORY, "app.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)

    tus_socket = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    tus_socket.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    tus_socket.bind(("127.0.0.1", 0))
    tus_socket.listen(128)  # connections made before uvicorn starts wait in the backlog
    checksum = ChecksumServer(("127.0.0.1", 0), ChecksumHandler)
    threading.Thread(target=checksum.serve_forever, daemon=True).start()

    def watch_stdin():
        sys.stdin.read()
        os._exit(0)

    threading.Thread(target=watch_stdin, daemon=True).start()
    server = uvicorn.Server(uvicorn.Config(module.app, log_level="error", access_log=False))
    ports = {"tus": tus_socket.getsockname()[1], "checksum": checksum.server_address[1]}

    sys.stdout.write(json.dumps(ports) + "\n")
    sys.stdout.flush()
    server.run(sockets=[tus_socket])


if __name__ == "__main__":
    main()
