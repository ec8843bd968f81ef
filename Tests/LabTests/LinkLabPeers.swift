import Foundation

/// The small Python peers of `LinkLabLiveTests` (Debian's python3, standard library only), each printing one line
/// per event so the test can follow it.
enum LinkLabPeers {
    static let python = "/usr/bin/python3"

    /// A TCP server on argv[1]:argv[2]: for each connection prints `accepted PEER`; with argv[3] == `echo` it echoes,
    /// with `sink` it reads to the end and prints `received BYTES SECONDS` (first byte to last); prints `closed` or
    /// `reset` when a connection ends.
    static let server = """
        import socket, sys, threading, time
        host, port, mode = sys.argv[1], int(sys.argv[2]), sys.argv[3]
        s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        s.bind((host, port)); s.listen(16); print("ready", flush=True)
        def serve(c, peer):
            print("accepted", peer[0], flush=True)
            total, first, last = 0, None, None
            try:
                while True:
                    b = c.recv(65536)
                    if not b: break
                    now = time.monotonic()
                    if first is None: first = now
                    last = now; total += len(b)
                    if mode == "echo": c.sendall(b)
                print("closed", flush=True)
            except ConnectionResetError:
                print("reset", flush=True)
            if mode == "sink":
                print("received", total, (last or 0) - (first or 0), flush=True)
            c.close()
        while True:
            c, peer = s.accept()
            threading.Thread(target=serve, args=(c, peer), daemon=True).start()
        """

    /// Connects to argv[1]:argv[2] argv[3] times and prints the median connect time (one round trip), ms, and the
    /// connection's congestion control.
    static let connectTimes = """
        import socket, sys, time
        times = []
        for _ in range(int(sys.argv[3])):
            c = socket.socket()
            start = time.monotonic(); c.connect((sys.argv[1], int(sys.argv[2]))); times.append(time.monotonic() - start)
            control = c.getsockopt(socket.IPPROTO_TCP, socket.TCP_CONGESTION, 16).rstrip(b"\\0").decode()
            c.close(); time.sleep(0.02)
        times.sort()
        print("rtt", times[len(times) // 2] * 1000, control, flush=True)
        """

    /// Sends argv[3] bytes to argv[1]:argv[2] and closes; prints `sent`.
    static let send = """
        import socket, sys
        c = socket.create_connection((sys.argv[1], int(sys.argv[2])), timeout=30)
        c.sendall(b"x" * int(sys.argv[3])); c.shutdown(socket.SHUT_WR); c.recv(1); c.close()
        print("sent", flush=True)
        """

    /// A UDP receiver on argv[1]:argv[2]: prints `ready`, counts datagrams until 1 s passes without one, prints
    /// `count N`.
    static let udpReceiver = """
        import socket, sys
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 22)
        s.bind((sys.argv[1], int(sys.argv[2]))); print("ready", flush=True)
        n = 0
        s.settimeout(None); s.recv(2048); n = 1; s.settimeout(1.0)
        try:
            while True: s.recv(2048); n += 1
        except socket.timeout:
            pass
        print("count", n, flush=True)
        """

    /// Sends argv[3] datagrams of 200 bytes to argv[1]:argv[2], 25 at a time every 5 ms (slow enough that a receiver
    /// descheduled for tens of ms on a loaded machine does not overflow its socket buffer); prints `sent N`.
    static let udpSender = """
        import socket, sys, time
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        n = int(sys.argv[3])
        for i in range(n):
            s.sendto(b"u" * 200, (sys.argv[1], int(sys.argv[2])))
            if i % 25 == 24: time.sleep(0.005)
        print("sent", n, flush=True)
        """

    /// Holds one connection to argv[1]:argv[2] open (`connected LOCAL`) until it ends (`old reset`, `old closed`);
    /// then, on a line on stdin, connects anew until an attempt is not refused (`refused` once if any was), prints
    /// `new LOCAL`, and `new ok after SECONDS` (since the old one ended) once an echo comes back.
    static let holder = """
        import socket, sys, time
        host, port = sys.argv[1], int(sys.argv[2])
        c = socket.create_connection((host, port)); print("connected", c.getsockname()[0], flush=True)
        try:
            b = c.recv(1)
            print("old closed" if not b else "old data", flush=True)
        except (ConnectionResetError, ConnectionAbortedError):
            print("old reset", flush=True)
        start = time.monotonic()
        refused = 0
        sys.stdin.readline()
        while True:
            try:
                n = socket.create_connection((host, port), timeout=5)
                break
            except ConnectionRefusedError:
                refused += 1
                if refused == 1: print("refused", flush=True)
                time.sleep(0.1)
        n.settimeout(5)
        print("new", n.getsockname()[0], flush=True)
        n.sendall(b"hello")
        print("new ok" if n.recv(5) == b"hello" else "new wrong", "after", time.monotonic() - start, flush=True)
        """
}
