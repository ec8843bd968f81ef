"""Sends HTTP/1.1 requests on connections of their own and releases them together: each request's head and all
but the last byte of its body (or its whole head when it has no body, less the head's last byte) are sent first,
then the last bytes of every request at once, so the receivers decide them at the same moment.

Reads one JSON object from stdin: {"requests": [{"port": P, "head": "METHOD /path HTTP/1.1\\r\\n...\\r\\n\\r\\n",
"body": HEX}, ...]}; prints one JSON object {"responses": [{"status": N, "headers": {lowercase name: value}}]}
in the same order.
"""
import json
import socket
import sys
import threading


def read_response(sock):
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


def main():
    requests = json.load(sys.stdin)["requests"]
    sockets = []
    wires = []
    for request in requests:
        sock = socket.create_connection(("127.0.0.1", request["port"]), timeout=60)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        wire = request["head"].encode("latin-1") + bytes.fromhex(request.get("body", ""))
        sock.sendall(wire[:-1])
        sockets.append(sock)
        wires.append(wire)
    responses = [None] * len(sockets)
    start = threading.Barrier(len(sockets))

    def finish(index):
        start.wait()
        sockets[index].sendall(wires[index][-1:])
        responses[index] = read_response(sockets[index])

    threads = [threading.Thread(target=finish, args=(index,)) for index in range(len(sockets))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    print(json.dumps({"responses": responses}))


main()
