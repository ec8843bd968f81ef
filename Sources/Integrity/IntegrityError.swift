/// The one error type of AetherIntegrity: a code callers compare, a message for people, and where it was thrown.
///
/// Messages never carry key material or file contents.
public struct IntegrityError: Error, Sendable, CustomStringConvertible {
    /// What went wrong, as a value callers can compare. New codes do not break callers.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Base: Hashable, Sendable {
            case digestMismatch, malformedProof, chainBroken, malformedManifest, malformedIdentifier, replayDetected,
                invalidArgument, timestampOutOfWindow, capacityExceeded, unsupported, serializationFailed,
                challengeWindowMissed, untrustedServer
        }
        private let base: Base
        private init(_ base: Base) { self.base = base }
        /// A chunk, root or link does not match what was committed.
        public static let digestMismatch = Code(.digestMismatch)
        /// A proof or checkpoint does not parse or has the wrong shape.
        public static let malformedProof = Code(.malformedProof)
        /// The commitment chain does not link.
        public static let chainBroken = Code(.chainBroken)
        /// A manifest is too small, malformed or inconsistent.
        public static let malformedManifest = Code(.malformedManifest)
        /// An ACI or CID does not parse.
        public static let malformedIdentifier = Code(.malformedIdentifier)
        /// A nonce or counter was seen before.
        public static let replayDetected = Code(.replayDetected)
        /// An argument is outside its documented range.
        public static let invalidArgument = Code(.invalidArgument)
        /// A message timestamp is further from the clock than the allowed skew (either direction).
        public static let timestampOutOfWindow = Code(.timestampOutOfWindow)
        /// A bounded cache is full; the input is refused rather than evicting live entries (fail closed).
        public static let capacityExceeded = Code(.capacityExceeded)
        /// A well-formed value names something reserved but not implemented (e.g. the fastcdc chunking).
        public static let unsupported = Code(.unsupported)
        /// Encoding a manifest or checkpoint failed (BUG-19: never an empty result).
        public static let serializationFailed = Code(.serializationFailed)
        /// A Byzantine challenge was not issued within 100 ms of the chunk's acknowledgement.
        public static let challengeWindowMissed = Code(.challengeWindowMissed)
        /// The server has used its three strikes and is no longer trusted.
        public static let untrustedServer = Code(.untrustedServer)
        /// The code's name.
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

    /// The code and the message.
    public var description: String { "IntegrityError(\(code)): \(message)" }
}
