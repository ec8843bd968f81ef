import AetherReceiver
import AetherTransport
import Foundation
import Testing

/// Requests whose body length is ambiguous (RFC 9112 section 6.3) are refused with 400 at the headers, before a
/// byte of the body is stored; the framing libmicrohttpd would pick (the first `Content-Length`) is never used.
@Suite struct ReceiverFramingTests {
    /// A tus upload of 10 bytes on `fixture`; returns its path.
    static func tusUpload(_ fixture: ReceiverFixture) async throws -> String {
        let created = try await fixture.send(
            "POST", "/uploads", headers: [("Tus-Resumable", "1.0.0"), ("Upload-Length", "10")])
        #expect(created.status == 201)
        return try #require(created.headers["Location"])
    }

    /// Sends `head` and `body` on a new connection; returns the status line's code.
    static func raw(_ fixture: ReceiverFixture, _ head: String, _ body: String) throws -> String {
        let connection = try RawHTTPConnection(port: fixture.server.http.port)
        connection.send(head + "\r\n" + body)
        let answer = connection.receiveAll()
        connection.close()
        return answer
    }

    @Test(arguments: [
        "Content-Length: 3\r\nContent-Length: 10\r\n",
        "Content-Length: 10\r\nContent-Length: 3\r\n",
        "Content-Length: 3\r\nTransfer-Encoding: chunked\r\n",
        "Transfer-Encoding: gzip, chunked\r\n",
        "Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n",
    ])
    func anAppendWithAmbiguousFramingIsRefusedAndStoresNothing(framing: String) async throws {
        let fixture = try ReceiverFixture()
        let location = try await Self.tusUpload(fixture)
        let before = try fixture.storeSnapshot()
        // What a lenient proxy could read as one request and the receiver as two: "abc", then a smuggled DELETE.
        let smuggled = "DELETE \(location) HTTP/1.1\r\nHost: a\r\nTus-Resumable: 1.0.0\r\n\r\n"
        let answer = try Self.raw(
            fixture,
            "PATCH \(location) HTTP/1.1\r\nHost: a\r\nTus-Resumable: 1.0.0\r\n"
                + "Content-Type: application/offset+octet-stream\r\nUpload-Offset: 0\r\n" + framing,
            framing.contains("chunked") ? "3\r\nabc\r\n0\r\n\r\n" + smuggled : "abc" + smuggled)
        #expect(answer.hasPrefix("HTTP/1.1 400 "), "\(answer)")
        #expect(answer.contains("urn:aether:problem:malformed-request"))
        #expect(!answer.contains("HTTP/1.1 204"))
        let head = try await fixture.send("HEAD", location, headers: [("Tus-Resumable", "1.0.0")])
        #expect(head.status == 200)
        #expect(head.headers["Upload-Offset"] == "0")
        #expect(try fixture.storeSnapshot() == before)
    }

    @Test func repeatedEqualContentLengthsAreOneLength() async throws {
        let fixture = try ReceiverFixture()
        let location = try await Self.tusUpload(fixture)
        let answer = try Self.raw(
            fixture,
            "PATCH \(location) HTTP/1.1\r\nHost: a\r\nTus-Resumable: 1.0.0\r\nConnection: close\r\n"
                + "Content-Type: application/offset+octet-stream\r\nUpload-Offset: 0\r\n"
                + "Content-Length: 3\r\nContent-Length: 3\r\n", "abc")
        #expect(answer.hasPrefix("HTTP/1.1 204 "), "\(answer)")
        let head = try await fixture.send("HEAD", location, headers: [("Tus-Resumable", "1.0.0")])
        #expect(head.headers["Upload-Offset"] == "3")
    }
}
