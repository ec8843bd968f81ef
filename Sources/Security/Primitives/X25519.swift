public import AetherIO

/// X25519 key agreement (RFC 7748) over libsodium.
public enum X25519 {
    /// A private scalar: opaque, wiped on release, printed `<redacted>`.
    public struct PrivateKey: Sendable, CustomStringConvertible {
        let secret: SecureBytes
        /// The matching public key.
        public let publicKey: PublicKey

        /// A fresh key pair from the system CSPRNG. Throws `.cryptoFailure` when libsodium is unusable (it did
        /// not initialise): a random scalar always yields a public key, so a failed derivation is never retried.
        public init() throws(SecurityError) {
            try self.init(libraryReady: Sodium.ready)
        }

        /// `init()` with the library's state passed in, so a test can force the failure of `sodium_init`.
        init(libraryReady: Bool) throws(SecurityError) {
            guard libraryReady else {
                throw SecurityError(.cryptoFailure, "libsodium did not initialise; no X25519 key can be made")
            }
            // The clamping happens inside X25519, so every 32-byte scalar is a valid private key.
            let secret = SecureBytes(randomCount: 32)
            self.publicKey = try Self.derivePublicKey(secret)
            self.secret = secret
        }

        /// Wraps a stored private scalar (a key store, a test vector with fixed ephemerals).
        public init(secureBytes: SecureBytes) throws(SecurityError) {
            guard secureBytes.count == 32 else {
                throw SecurityError(.invalidKey, "an X25519 private key is 32 bytes, got \(secureBytes.count)")
            }
            secret = secureBytes
            publicKey = try Self.derivePublicKey(secureBytes)
        }

        private static func derivePublicKey(_ secret: SecureBytes) throws(SecurityError) -> PublicKey {
            var raw = [UInt8](repeating: 0, count: 32)
            let ok = unsafe raw.withUnsafeMutableBytes { out in
                unsafe secret.withUnsafeBytes { unsafe Sodium.x25519Base(out, $0) }
            }
            guard ok else { throw SecurityError(.invalidKey, "X25519 public key derivation failed") }
            return PublicKey(unchecked: raw)
        }

        /// The shared secret with `peer`. A small-order or all-zero result throws `.authenticationFailed`
        /// (Noise requires a handshake to fail on it; the message is fixed and says nothing more).
        public func sharedSecret(with peer: PublicKey) throws(SecurityError) -> SharedSecret {
            let peerBytes = peer.rawRepresentation
            let shared = try unsafe SecureBytes(count: 32) { (out) throws(SecurityError) in
                let ok = unsafe secret.withUnsafeBytes { mine in
                    unsafe peerBytes.withUnsafeBytes { theirs in unsafe Sodium.x25519(out, mine, theirs) }
                }
                guard ok else { throw SecurityError.authenticationFailedError() }
            }
            return SharedSecret(secret: shared)
        }

        public var description: String { "<redacted>" }
    }

    /// A public key (32 bytes, not secret).
    public struct PublicKey: Sendable, Hashable {
        /// The 32-byte little-endian u-coordinate.
        public let rawRepresentation: [UInt8]

        /// Parses 32 bytes; any other length throws `.invalidKey`.
        public init(rawRepresentation: some Collection<UInt8>) throws(SecurityError) {
            guard rawRepresentation.count == 32 else {
                throw SecurityError(.invalidKey, "an X25519 public key is 32 bytes, got \(rawRepresentation.count)")
            }
            self.rawRepresentation = Array(rawRepresentation)
        }

        init(unchecked raw: [UInt8]) { rawRepresentation = raw }
    }
}

/// The output of a key agreement: secret, opaque, wiped on release. Feed it to a KDF, never use it as a key.
public struct SharedSecret: Sendable, CustomStringConvertible {
    let secret: SecureBytes

    /// Calls `body` with the secret bytes, for KDFs inside this package.
    package func withUnsafeBytes<R, E: Error>(_ body: (UnsafeRawBufferPointer) throws(E) -> R) throws(E) -> R {
        try unsafe secret.withUnsafeBytes(body)
    }

    public var description: String { "<redacted>" }
}
