import Testing

@testable import AetherTransport

@Suite struct UDPAddressTests {
    @Test(arguments: ["127.0.0.1:47300", "localhost:1", "10.1.2.3:65535"])
    func validAddressesParse(text: String) throws {
        let address = try UDPAddress(parsing: text)
        let expected = text.hasPrefix("localhost") ? "127.0.0.1" + text.dropFirst("localhost".count) : text
        #expect(address.description == expected)
    }

    @Test(arguments: ["", "127.0.0.1", "127.0.0.1:", "127.0.0.1:65536", "1.2.3:80", "host.example:80", "::1:80", ":80"])
    func malformedAddressesAreTypedErrors(text: String) {
        #expect(throws: TransportError.self) { try UDPAddress(parsing: text) }
        do {
            _ = try UDPAddress(parsing: text)
        } catch {
            #expect(error.code == .invalidArgument)
        }
    }

    // Found by the `udp-address` fuzz target: each was accepted although it is not the address's spelling
    // (an embedded NUL ended the C string inet_pton read, so trailing garbage after it was ignored).
    @Test(arguments: ["1.2.3.4:080", "1.2.3.4:+80", "1.2.3.4:-0", "localhost:007", "1.2.3.4 :80"])
    func nonCanonicalAddressesAreRejected(text: String) {
        #expect(throws: TransportError.self) { try UDPAddress(parsing: text) }
    }

    @Test func aHostWithAnEmbeddedNULIsRejected() {
        // Built here rather than passed as an argument, so the test log prints no NUL.
        for suffix in ["junk", "", ".5"] {
            #expect(throws: TransportError.self) { try UDPAddress(parsing: "1.2.3.4\u{0}\(suffix):80") }
        }
    }

    @Test func aTokenBucketAdmitsItsBurstThenRefillsPerMillisecond() {
        var bucket = TokenBucket(capacity: 3, perSecond: 10, now: 0)
        let admitted = [0, 0, 0, 0, 99, 100, 100].map { bucket.take(now: UInt64($0)) }
        #expect(admitted == [true, true, true, false, false, true, false])
        #expect(bucket.isFull(now: 400))
        #expect(!bucket.isFull(now: 250))
    }
}
