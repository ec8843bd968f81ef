/// The one error type of AetherCoding: a code callers compare, a message for people, and where it was thrown.
///
/// Messages never carry key material or file contents.
public struct CodingError: Error, Sendable, CustomStringConvertible {
    /// What went wrong, as a value callers can compare. New codes do not break callers.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Base: Hashable, Sendable {
            case invalidParameters, tooFewShards, shardSizeMismatch, singularMatrix, malformedIndex, verificationFailed
            case fileSystem, malformedPacket, invalidTransmissionInformation
        }
        private let base: Base
        private init(_ base: Base) { self.base = base }
        /// K, m or the shard size is outside what the code supports.
        public static let invalidParameters = Code(.invalidParameters)
        /// Fewer than k shards survive.
        public static let tooFewShards = Code(.tooFewShards)
        /// Shards are not all the same length.
        public static let shardSizeMismatch = Code(.shardSizeMismatch)
        /// The surviving shards do not give an invertible matrix.
        public static let singularMatrix = Code(.singularMatrix)
        /// A shard index file is missing or malformed.
        public static let malformedIndex = Code(.malformedIndex)
        /// A rebuilt file or shard does not match its digest.
        public static let verificationFailed = Code(.verificationFailed)
        /// A file operation failed (the message names the path and errno).
        public static let fileSystem = Code(.fileSystem)
        /// A fountain encoding packet is damaged: wrong length, or an SBN or ESI outside the object.
        public static let malformedPacket = Code(.malformedPacket)
        /// RaptorQ object transmission information (OTI) is malformed or outside what RFC 6330 allows.
        public static let invalidTransmissionInformation = Code(.invalidTransmissionInformation)
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

    public var description: String { "CodingError(\(code)): \(message)" }
}
