/// The one error type of AetherTransport: a code callers compare, a message for people, and where it was thrown.
///
/// Messages never carry key material or file contents.
public struct TransportError: Error, Sendable, CustomStringConvertible {
    /// What went wrong, as a value callers can compare. New codes do not break callers.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Base: Hashable, Sendable {
            case timedOut, refused, protocolViolation, systemCall, invalidArgument, notConnected, unknownKey
        }
        private let base: Base
        private init(_ base: Base) { self.base = base }
        /// No answer within the retry window.
        public static let timedOut = Code(.timedOut)
        /// The peer refused the request.
        public static let refused = Code(.refused)
        /// The peer broke the protocol.
        public static let protocolViolation = Code(.protocolViolation)
        /// A socket call failed.
        public static let systemCall = Code(.systemCall)
        /// An argument is outside its documented range.
        public static let invalidArgument = Code(.invalidArgument)
        /// No session is live.
        public static let notConnected = Code(.notConnected)
        /// No paired key for the host (or the key id is unknown).
        public static let unknownKey = Code(.unknownKey)
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

    public var description: String { "TransportError(\(code)): \(message)" }
}
