import AetherIO
import FoundationEssentials

/// An issued possession challenge as receivers of a fleet share it through their catalogue: the challenge and the
/// verifier's ephemeral private key, so that whichever receiver the answer reaches can check it. Single use and the
/// lifetime are then the keeper's to enforce (take it out once; `verify` checks the age). The key is secret:
/// `description` shows none of it.
///
/// Serialized: `"APP1" || u16 challenge length || challenge || private key(32)`.
public struct PossessionSharedChallenge: Sendable, CustomStringConvertible {
    static let magic: [UInt8] = Array("APP1".utf8)

    /// The challenge the prover answers.
    public let challenge: PossessionChallenge
    let key: X25519.PrivateKey

    init(challenge: PossessionChallenge, key: X25519.PrivateKey) {
        self.challenge = challenge
        self.key = key
    }

    /// The bytes the catalogue keeps (the private key included).
    public var serialized: [UInt8] {
        let body = challenge.serialized
        var out = Self.magic
        PossessionWireReader.append(UInt64(body.count), byteCount: 2, to: &out)
        out += body
        out += unsafe key.secret.withUnsafeBytes { unsafe Array($0) }
        return out
    }

    /// Parses `serialized`; anything else is `.malformedMessage`.
    public init(serialized bytes: [UInt8]) throws(SecurityError) {
        var reader = PossessionWireReader(bytes)
        guard try reader.take(4) == Self.magic else {
            throw SecurityError(.malformedMessage, "not a shared possession challenge")
        }
        let length = Int(try reader.integer(byteCount: 2))
        challenge = try PossessionChallenge(serialized: try reader.take(length))
        key = try X25519.PrivateKey(secureBytes: SecureBytes(copying: try reader.take(32)))
        try reader.finish()
        guard key.publicKey.rawRepresentation == challenge.verifierKey.rawRepresentation else {
            throw SecurityError(.malformedMessage, "the shared possession challenge does not hold together")
        }
    }

    public var description: String { "PossessionSharedChallenge(nonce: \(challenge.nonce), key: <redacted>)" }
}

extension ProofOfPossessionVerifier {
    /// A fresh challenge (as `issueChallenge()`) with what another verifier of the same content needs to check
    /// its answer. This verifier does not keep it: the caller stores it and later hands it to `verify(_:shared:)`.
    public func issueSharedChallenge() throws(SecurityError) -> PossessionSharedChallenge {
        let key = try X25519.PrivateKey()
        let challenge = try PossessionChallenge(
            nonce: UUIDv7(date: clock.wallDate()), verifierKey: key.publicKey, items: drawItems())
        return PossessionSharedChallenge(challenge: challenge, key: key)
    }

    /// Accepts `response` to the stored `shared` challenge or throws: `.expired` 15 s or more after the challenge
    /// was issued (the nonce's time), `.authenticationFailed` (one fixed message) for a response to another
    /// challenge, one that does not decrypt, or answers that do not all match.
    public func verify(_ response: PossessionResponse, shared: PossessionSharedChallenge) throws(SecurityError) {
        let issued = shared.challenge.nonce.date
        guard clock.wallDate().timeIntervalSince(issued) < Self.challengeLifetime else {
            throw SecurityError(.expired, "the challenge expired before the response arrived")
        }
        guard response.nonce == shared.challenge.nonce else { throw SecurityError.authenticationFailedError() }
        do {
            try check(
                response,
                against: PossessionVerifierStateMachine.Pending(
                    challenge: shared.challenge, key: shared.key, issuedAt: issued))
        } catch {
            throw SecurityError.authenticationFailedError()
        }
    }
}
