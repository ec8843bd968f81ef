"""A client whose link freezes mid-request: sends a request head and the first bytes of its body, then neither
sends nor closes (as a phone whose network changed), until its standard input ends.

Reads one JSON object line from stdin: {"port": P, "head": "PATCH /path HTTP/1.1\\r\\n...\\r\\n\\r\\n",
"body_file": PATH, "send": N}. Connects to 127.0.0.1:P, sends the head and the first N bytes of the file, prints
{"sent": N} and waits for stdin to end; then closes the socket and prints {"closed": true}.
"""
import json
import socket
import sys


def main():
    request = json.loads(sys.stdin.readline())
    with open(request["body_file"], "rb") as source:
        body = source.read(request["send"])
    sock = socket.create_connection(("127.0.0.1", request["port"]), timeout=60)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    sock.sendall(request["head"].encode("latin-1") + body)
    print(json.dumps({"sent": len(body)}), flush=True)
    sys.stdin.read()
    sock.close()
    print(json.dumps({"closed": True}), flush=True)


main()
