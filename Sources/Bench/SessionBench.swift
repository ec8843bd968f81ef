import AetherIO
import AetherSecurity

/// `session`: sealed records against raw libsodium ChaCha20-Poly1305 on the same sizes, and a full
/// handshake (both sides) against the X25519 operations it performs, all in the same run.
enum SessionBench: BenchSuite {
    static let name = "session"
    static let runsByDefault = true
    static let summary = "sealed records against raw libsodium, and a full handshake against its X25519 work"

    /// Times `ours` and `baseline` alternately (so both see the same machine load) and returns the
    /// median seconds of each and the median of the per-pair ratios `ours / baseline`.
    static func paired(runs: Int = 9, ours: () -> Void, baseline: () -> Void) -> (Double, Double, Double) {
        ours()
        baseline()
        var oursTimes: [Double] = []
        var baselineTimes: [Double] = []
        var ratios: [Double] = []
        for _ in 0..<runs {
            var start = Measure.now()
            ours()
            let a = Measure.now() - start
            start = Measure.now()
            baseline()
            let b = Measure.now() - start
            oursTimes.append(a)
            baselineTimes.append(b)
            ratios.append(a / b)
        }
        func median(_ values: [Double]) -> Double { values.sorted()[values.count / 2] }
        return (median(oursTimes), median(baselineTimes), median(ratios))
    }

    static func run(options: [String]) async throws {
        try records(size: 1_200, iterations: 20_000, label: "1200B")
        try records(size: SessionWire.maxRecordPlaintext, iterations: 400, label: "64KiB(65471B)")
        try handshake(iterations: 300)
    }

    static func records(size: Int, iterations: Int, label: String) throws {
        let key = SymmetricKey(size: .bits256)
        var sealer = try RecordSealer(key: key, direction: .clientToHost, sessionID: 1)
        var opener = try RecordOpener(key: key, direction: .clientToHost, sessionID: 1)
        var plaintext = [UInt8](repeating: 0x5a, count: size)
        var datagram = [UInt8](repeating: 0, count: RecordSealer.sealedSize(plaintextCount: size))
        var failure: SecurityError?
        let rawKey = SecureRandom.bytes(32)
        let aad = [UInt8](repeating: 3, count: SessionWire.recordHeaderSize)
        var sealed = [UInt8](repeating: 0, count: size + SessionWire.tagSize)
        var counter: UInt64 = 0
        var baselineOK = true
        let (ours, _, ratio) = paired(
            ours: {
                unsafe datagram.withUnsafeMutableBytes { out in
                    unsafe plaintext.withUnsafeMutableBytes { text in
                        do throws(SecurityError) {
                            for _ in 0..<iterations {
                                _ = try unsafe sealer.seal(
                                    innerType: 0, plaintext: UnsafeRawBufferPointer(text), into: out)
                                _ = try unsafe opener.open(UnsafeRawBufferPointer(out), into: text)
                            }
                        } catch {
                            failure = error
                        }
                    }
                }
            },
            baseline: {
                unsafe sealed.withUnsafeMutableBytes { c in
                    unsafe plaintext.withUnsafeMutableBytes { m in
                        unsafe aad.withUnsafeBytes { a in
                            unsafe rawKey.withUnsafeBytes { k in
                                for _ in 0..<iterations {
                                    baselineOK =
                                        unsafe SodiumBaseline.sealOpen(
                                            message: m, sealed: c, aad: a, key: k, counter: counter) && baselineOK
                                    counter += 1
                                }
                            }
                        }
                    }
                }
            })
        if let failure { throw failure }
        guard baselineOK else { throw BenchError("libsodium baseline failed") }
        Measure.line(
            "session_seal_open_\(label)", Measure.rate(bytes: size * iterations, seconds: ours),
            ratios: [("ratio_vs_libsodium_chacha20poly1305_ietf", 1 / ratio)])
    }

    static func handshake(iterations: Int) throws {
        let psk = SymmetricKey(size: .bits256)
        let keyID = KeyID()
        let accept = try Accept(
            sessionID: 9, hostTime: 1_764_460_800_000, livenessTimeoutMilliseconds: 15_000, maxSessionAgeSeconds: 3_600,
            maxCounter: UInt32.max, maxRecordPlaintext: 65_471, slots: SlotStatus(entries: []), hostName: "bench")
        var failure: (any Error)?
        var accepted = 0
        let initiatorSecret = SecureRandom.bytes(32)
        let responderSecret = SecureRandom.bytes(32)
        var x25519OK = true
        let (ours, _, ratio) = paired(
            ours: {
                do {
                    for index in 0..<iterations {
                        let hello = try Hello(
                            intent: .connect, timestamp: UInt64(index + 1), keyID: keyID, previousSessionID: 0)
                        var initiator = try SessionInitiator(hello: hello, psk: psk)
                        var responder = try SessionResponder(message1: Message1.parse(initiator.message1), psk: psk)
                        let (message2, _) = try responder.answer(.accept(accept))
                        if case .accepted = try initiator.receive(message2: message2) { accepted += 1 }
                    }
                } catch {
                    failure = error
                }
            },
            baseline: {
                unsafe initiatorSecret.withUnsafeBytes { i in
                    unsafe responderSecret.withUnsafeBytes { r in
                        for _ in 0..<iterations {
                            x25519OK = unsafe SodiumBaseline.handshakeX25519(initiator: i, responder: r) && x25519OK
                        }
                    }
                }
            })
        if let failure { throw failure }
        guard accepted > 0, x25519OK else { throw BenchError("handshake or X25519 baseline failed") }
        Measure.line(
            "session_handshake_both_sides", Measure.formatted(ours / Double(iterations) * 1e6, decimals: 1) + " us",
            ratios: [("ratio_vs_its_4_x25519_ops", ratio)])
    }
}
