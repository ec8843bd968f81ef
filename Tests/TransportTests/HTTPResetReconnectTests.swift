import AetherTransport
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// A reused connection reset under a request's body while the server stops listening (a phone changing network:
/// every connection cut, new ones refused). libcurl then tries a fresh connection, which is refused, and reports a
/// connect failure; but part of the body had already reached the server, so the client must call it a closed
/// connection: a refusal means nothing was sent, and the uploader would not ask the destination what it holds before
/// sending the whole part again (issue 25: 12 MiB re-sent in a 128 MiB upload on the link lab).
@Suite struct HTTPResetReconnectTests {
    /// Serves one request on a kept-alive connection; then, on whichever connection the next request comes (the
    /// same one when the client reuses it, as libcurl does), reads its head and `argv[1]` bytes of its body, closes
    /// the listening socket and resets that connection (SO_LINGER 0). Prints `port N`, then `received BYTES`.
    static let peer = """
        import select, signal, socket, struct, sys
        signal.alarm(600)  # never outlive a test process that died: its stderr would hold `swift test` open
        s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(8)
        print("port", s.getsockname()[1], flush=True)
        def head(c):
            data = b""
            while b"\\r\\n\\r\\n" not in data:
                more = c.recv(65536)
                if not more: return None, b""
                data += more
            top, rest = data.split(b"\\r\\n\\r\\n", 1)
            length = 0
            for line in top.split(b"\\r\\n")[1:]:
                name, _, value = line.partition(b":")
                if name.strip().lower() == b"content-length": length = int(value)
            return length, rest
        first, _ = s.accept()
        length, body = head(first)
        while len(body) < length: body += first.recv(65536)
        first.sendall(b"HTTP/1.1 200 OK\\r\\nContent-Length: 0\\r\\n\\r\\n")
        open_connections = [first]
        while True:
            ready, _, _ = select.select(open_connections + [s], [], [])
            if s in ready:
                open_connections.append(s.accept()[0])
                continue
            c = ready[0]
            length, body = head(c)
            if length is None:
                open_connections.remove(c); c.close()
                continue
            break
        while len(body) < int(sys.argv[1]): body += c.recv(65536)
        s.close()
        c.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        c.close()
        print("received", len(body), flush=True)
        """

    @Test func aReusedConnectionResetUnderTheBodyIsClosedNotRefused() async throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        process.arguments = ["-c", Self.peer, "262144"]
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        defer { if process.isRunning { process.terminate() } }
        let handle = output.fileHandleForReading
        let first = try await Self.line(handle)
        let port = try #require(Int(first.split(separator: " ").last ?? ""))
        let client = try HTTPClient(configuration: HTTPClientConfiguration(proxy: .none))
        defer { client.shutDown() }
        let url = "http://127.0.0.1:\(port)/put"
        let warm = try await client.send(
            HTTPRequest(method: "PUT", url: url, body: .bytes([UInt8](repeating: 1, count: 10))))
        #expect(warm.status == 200)
        do {
            let response = try await client.send(
                HTTPRequest(method: "PUT", url: url, body: .bytes([UInt8](repeating: 2, count: 4 << 20))))
            Issue.record("the reset request was answered \(response.status)")
        } catch {
            #expect(error.code == .connectionClosed, "\(error)")
        }
        let received = try await Self.line(handle)
        // The server had part of the body before the reset: not a request that never left.
        #expect(received.hasPrefix("received "), "\(received)")
        #expect((Int(received.split(separator: " ").last ?? "") ?? 0) >= 262_144)
    }

    /// The peer's next line (it prints one at a time and flushes; empty at its end), read without blocking a thread of
    /// the cooperative pool: the descriptor is non-blocking and an empty pipe is waited on with a short sleep. The
    /// deadline is looked at only when the pipe is empty: a task that the busy pool resumed late (over 100 s in a full
    /// `make test`) still reads what the peer printed meanwhile.
    static func line(_ handle: FileHandle) async throws -> String {
        let descriptor = handle.fileDescriptor
        _ = fcntl(descriptor, F_SETFL, fcntl(descriptor, F_GETFL) | O_NONBLOCK)
        var bytes: [UInt8] = []
        var byte: UInt8 = 0
        let deadline = ContinuousClock.now + .seconds(300)
        while true {
            let got = unsafe read(descriptor, &byte, 1)
            if got == 1 {
                if byte == UInt8(ascii: "\n") { break }
                bytes.append(byte)
                continue
            }
            guard got < 0, errno == EAGAIN || errno == EINTR, ContinuousClock.now < deadline else { break }
            try await Task.sleep(for: .milliseconds(10))
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
