public import AetherIO
import FoundationEssentials
import Synchronization

/// The certificate pin manager (the spec's PR9CertificatePinManager, BUG-12/BUG-16/RACE-6): CA pins, backup
/// CA pins kept 72 h after a rotation, and emergency leaf pins, in one Mutex-guarded state. It fails closed:
/// an empty chain, an unparseable certificate or no matching pin is a rejection.
///
/// `validate(chain:)` is synchronous so that libssl's certificate verification (and libcurl through
/// `CURLOPT_SSL_CTX_FUNCTION`) can call it on the handshake thread with no `await` and no task hop.
/// Pins change only through `apply(_:)` with a `PinUpdatePayload` signed by a trusted RSA-4096 key.
public final class CertificatePinManager: Sendable {
    private let state: Mutex<PinSetStateMachine>
    private let trustedKeys: [String: PinSigningKey]
    private let clock: any AetherClock

    /// A manager whose updates must be signed by the embedded key (`EmbeddedPinSigningKey`).
    public convenience init(configuration: PinConfiguration, clock: any AetherClock = SystemClock())
        throws(SecurityError)
    {
        try self.init(configuration: configuration, trustedKeys: [EmbeddedPinSigningKey.load()], clock: clock)
    }

    /// A manager trusting `trustedKeys` for updates. Internal: tests inject keys they generate at test time.
    init(configuration: PinConfiguration, trustedKeys: [PinSigningKey], clock: any AetherClock) {
        state = Mutex(PinSetStateMachine(configuration: configuration))
        var keys: [String: PinSigningKey] = [:]
        for key in trustedKeys { keys[key.id] = key }
        self.trustedKeys = keys
        self.clock = clock
    }

    /// The current pins.
    public var snapshot: PinSetSnapshot { state.withLock { $0.snapshot } }

    /// Validates a chain of DER certificates, leaf first (intermediates, then root if sent). Returns the tier that
    /// matched; throws `.malformedMessage` for an empty chain or any unparseable certificate and `.pinMismatch`
    /// when no pin matches. This checks pins only: the caller must also have validated the chain itself.
    public func validate(chain: [[UInt8]]) throws(SecurityError) -> PinMatch {
        guard !chain.isEmpty else { throw SecurityError(.malformedMessage, "empty certificate chain") }
        var pins: [SPKIPin] = []
        for der in chain { pins.append(try SPKIPin(certificateDER: der)) }
        guard let match = evaluate(spkiChain: pins) else {
            throw SecurityError(.pinMismatch, "no certificate pin matches the chain")
        }
        return match
    }

    /// The verdict on a chain given as SPKI pins, leaf first; nil means reject.
    public func evaluate(spkiChain: [SPKIPin]) -> PinMatch? {
        let now = clock.wallDate()
        return state.withLock { $0.evaluate(spkiChain: spkiChain, now: now) }
    }

    /// True when a pin matches the chain (SPKI pins, leaf first).
    func isTrusted(spkiChain: [SPKIPin]) -> Bool { evaluate(spkiChain: spkiChain) != nil }

    /// Applies a signed pin rotation: the active CA pins become backups for 72 h and the update's pins become
    /// active. An unknown key id, a bad signature, or a stale, premature or expired update throws
    /// `.invalidPinUpdate` and leaves every pin as it was.
    public func apply(_ update: PinUpdatePayload) throws(SecurityError) {
        guard let key = trustedKeys[update.signingKeyID] else {
            throw SecurityError(.invalidPinUpdate, "the pin update is signed by an unknown key")
        }
        guard key.verifies(update) else {
            throw SecurityError(.invalidPinUpdate, "the pin update signature does not verify")
        }
        let now = clock.wallDate()
        let decision = state.withLock { $0.apply(update, now: now) }
        if case .rejected(let reason) = decision { throw SecurityError(.invalidPinUpdate, reason) }
    }
}
