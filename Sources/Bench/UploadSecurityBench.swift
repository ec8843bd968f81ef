import AetherIO
import AetherSecurity
import FoundationEssentials

/// `uploadsec`: AES-256-GCM (OpenSSL EVP through `AESGCM`) against ChaCha20-Poly1305 (libsodium through
/// `ChaChaPoly`) on the same buffers, and the proof-of-possession full-content answer (an HMAC-SHA-256 over
/// the content, plus the key exchange and sealing) against one plain SHA-256 pass over the same bytes.
enum UploadSecurityBench: BenchSuite {
    static let name = "uploadsec"
    static let runsByDefault = true
    static let summary = "AES-256-GCM against ChaCha20-Poly1305, and the proof-of-possession answer against SHA-256"

    static func run(options: [String]) async throws {
        try aead(size: 64 * 1024, iterations: 400)
        try possession(size: 32 * 1024 * 1024)
    }

    static func aead(size: Int, iterations: Int) throws {
        let key = SymmetricKey(size: .bits256)
        let gcmNonce = AESGCM.Nonce()
        let chachaNonce = ChaChaPoly.Nonce(noiseCounter: 1)
        var plaintext = [UInt8](repeating: 0x5A, count: size)
        var sealed = [UInt8](repeating: 0, count: size + 16)
        let aad = [UInt8](repeating: 7, count: 13)
        var failure: SecurityError?
        let (ours, _, ratio) = SessionBench.paired(
            ours: {
                unsafe roundTrips(iterations, &plaintext, &sealed, aad, &failure) {
                    text, out, extra throws(SecurityError) in
                    try unsafe AESGCM.seal(
                        UnsafeRawBufferPointer(text), authenticating: extra, nonce: gcmNonce, key: key, into: out)
                    try unsafe AESGCM.open(
                        UnsafeRawBufferPointer(out), authenticating: extra, nonce: gcmNonce, key: key, into: text)
                }
            },
            baseline: {
                unsafe roundTrips(iterations, &plaintext, &sealed, aad, &failure) {
                    text, out, extra throws(SecurityError) in
                    try unsafe ChaChaPoly.seal(
                        UnsafeRawBufferPointer(text), authenticating: extra, nonce: chachaNonce, key: key, into: out)
                    try unsafe ChaChaPoly.open(
                        UnsafeRawBufferPointer(out), authenticating: extra, nonce: chachaNonce, key: key, into: text)
                }
            })
        if let failure { throw failure }
        guard plaintext.allSatisfy({ $0 == 0x5A }) else {
            throw BenchError("round trip changed the data")
        }
        Measure.line(
            "aes256gcm seal+open 64KiB", Measure.rate(bytes: 2 * size * iterations, seconds: ours),
            ratios: [("ratio_vs_chacha20poly1305", 1 / ratio)])
    }

    private static func roundTrips(
        _ iterations: Int, _ plaintext: inout [UInt8], _ sealed: inout [UInt8], _ aad: [UInt8],
        _ failure: inout SecurityError?,
        _ body: (UnsafeMutableRawBufferPointer, UnsafeMutableRawBufferPointer, UnsafeRawBufferPointer)
            throws(SecurityError) -> Void
    ) {
        unsafe plaintext.withUnsafeMutableBytes { text in
            unsafe sealed.withUnsafeMutableBytes { out in
                unsafe aad.withUnsafeBytes { extra in
                    do throws(SecurityError) {
                        for _ in 0..<iterations { try unsafe body(text, out, extra) }
                    } catch {
                        failure = error
                    }
                }
            }
        }
    }

    static func possession(size: Int) throws {
        let content = SecureRandom.bytes(size)
        let source = InMemoryPossessionSource(content)
        let chunkSize: UInt32 = 4 * 1024 * 1024
        let prover = try ProofOfPossessionProver(
            source: source, chunkSize: chunkSize,
            chunkHashes: ProofOfPossessionProver.chunkHashes(of: source, chunkSize: chunkSize))
        let verifierKey = try X25519.PrivateKey().publicKey
        var failure: (any Error)?
        var sink = Digest32.zero
        let (ours, _, ratio) = SessionBench.paired(
            runs: 7,
            ours: {
                do {
                    let challenge = try PossessionChallenge(
                        nonce: UUIDv7(date: Date()), verifierKey: verifierKey, items: [.fullHash])
                    _ = try prover.respond(to: challenge)
                } catch {
                    failure = error
                }
            },
            baseline: { sink = SHA256.hash(content) })
        if let failure { throw BenchError("\(failure)") }
        guard sink != .zero else { throw BenchError("no digest") }
        Measure.line(
            "pop full-hash answer 32MiB", Measure.rate(bytes: size, seconds: ours),
            ratios: [("ratio_vs_sha256", 1 / ratio)]
        )
    }
}
