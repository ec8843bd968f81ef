import AetherTransport
import Foundation
import Testing

/// A reused connection reset under a request's body while the server stops listening (a phone changing network:
/// every connection cut, new ones refused). libcurl then tries a fresh connection, which is refused, and reports a
/// connect failure; but part of the body had already reached the server, so the client must call it a closed
/// connection: a refusal means nothing was sent, and the uploader would not ask the destination what it holds before
/// sending the whole part again (issue 25: 12 MiB re-sent in a 128 MiB upload on the link lab).
@Suite struct HTTPResetReconnectTests {
    /// Serves one request on a kept-alive connection, then reads the head and `argv[2]` bytes of the next one's body,
    /// closes the listening socket and resets the connection (SO_LINGER 0). Prints `port N`, then `received BYTES`.
    static let peer = """
        import socket, struct, sys
        s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(1)
        print("port", s.getsockname()[1], flush=True)
        c, _ = s.accept()
        def head():
            data = b""
            while b"\\r\\n\\r\\n" not in data:
                more = c.recv(65536)
                if not more: sys.exit(1)
                data += more
            top, rest = data.split(b"\\r\\n\\r\\n", 1)
            length = 0
            for line in top.split(b"\\r\\n")[1:]:
                name, _, value = line.partition(b":")
                if name.strip().lower() == b"content-length": length = int(value)
            return length, rest
        length, body = head()
        while len(body) < length: body += c.recv(65536)
        c.sendall(b"HTTP/1.1 200 OK\\r\\nContent-Length: 0\\r\\n\\r\\n")
        length, body = head()
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
        let first = Self.line(handle)
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
        let received = Self.line(handle)
        // The server had part of the body before the reset: not a request that never left.
        #expect(received.hasPrefix("received "), "\(received)")
        #expect((Int(received.split(separator: " ").last ?? "") ?? 0) >= 262_144)
    }

    /// The peer's next line (it prints one at a time and flushes): empty at its end.
    static func line(_ handle: FileHandle) -> String {
        var bytes: [UInt8] = []
        while let byte = try? handle.read(upToCount: 1)?.first, byte != UInt8(ascii: "\n") { bytes.append(byte) }
        return String(decoding: bytes, as: UTF8.self)
    }
}
