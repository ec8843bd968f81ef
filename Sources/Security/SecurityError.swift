/// The one error type of AetherSecurity: a code callers compare, a message for people, and where it was thrown.
///
/// Messages never carry key material or file contents.
public struct SecurityError: Error, Sendable, CustomStringConvertible {
    /// What went wrong, as a value callers can compare. New codes do not break callers.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Base: Hashable, Sendable {
            case authenticationFailed, invalidKey, malformedMessage, pinMismatch, invalidPinUpdate, keyStoreDamaged,
                keyRingFull, expired, replayDetected, limitExceeded, systemCall, cryptoFailure
        }
        private let base: Base
        private init(_ base: Base) { self.base = base }
        /// Authentication failed.
        public static let authenticationFailed = Code(.authenticationFailed)
        /// A key has the wrong size or form.
        public static let invalidKey = Code(.invalidKey)
        /// A message does not parse.
        public static let malformedMessage = Code(.malformedMessage)
        /// No certificate pin matches the chain.
        public static let pinMismatch = Code(.pinMismatch)
        /// A pin update is not signed, stale or from an unknown key.
        public static let invalidPinUpdate = Code(.invalidPinUpdate)
        /// A key store item is damaged.
        public static let keyStoreDamaged = Code(.keyStoreDamaged)
        /// The key ring holds the maximum number of keys.
        public static let keyRingFull = Code(.keyRingFull)
        /// A challenge or key is past its lifetime.
        public static let expired = Code(.expired)
        /// A message was seen before.
        public static let replayDetected = Code(.replayDetected)
        /// A counter or size limit would be exceeded.
        public static let limitExceeded = Code(.limitExceeded)
        /// A system call failed.
        public static let systemCall = Code(.systemCall)
        /// A crypto library is unusable or a call into it failed where no input can be blamed.
        public static let cryptoFailure = Code(.cryptoFailure)
        public var description: String { "\(base)" }
    }

    /// The error's code.
    public let code: Code
    /// A message for people.
    public let message: String
    /// Source location that threw.
    public let location: String

    /// Creates an error; `location` defaults to the caller's file and line.
    public init(_ code: Code, _ message: String, file: StaticString = #fileID, line: UInt = #line) {
        self.code = code
        self.message = message
        self.location = "\(file):\(line)"
    }

    public var description: String { "SecurityError(\(code)): \(message)" }
}

extension SecurityError {
    /// The one error for anything that fails to authenticate, verify or decrypt: a fixed message that
    /// tells an attacker nothing about which check failed.
    public static func authenticationFailedError(file: StaticString = #fileID, line: UInt = #line) -> SecurityError {
        SecurityError(.authenticationFailed, "authentication failed", file: file, line: line)
    }
}
