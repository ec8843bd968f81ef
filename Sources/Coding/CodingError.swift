import AetherIO

/// The one error type of AetherCoding: a code callers compare, a message for people, and where it was thrown.
///
/// Messages never carry key material or file contents.
public struct CodingError: Error, Sendable, CustomStringConvertible {
    /// What went wrong, as a value callers can compare. New codes do not break callers.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Base: Hashable, Sendable {
            case invalidParameters, tooFewShards, shardSizeMismatch, singularMatrix, malformedIndex, verificationFailed
            case fileSystem, malformedPacket, invalidTransmissionInformation
            case fileChanged, notARegularFile, outputIsInput, unverifiableIndex
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
        /// The input file changed (size, mtime, replaced) while it was encoded.
        public static let fileChanged = Code(.fileChanged)
        /// An input, the index or a shard is a directory, FIFO, device or socket.
        public static let notARegularFile = Code(.notARegularFile)
        /// An output names an input, or lies inside the shard set being read or replaced.
        public static let outputIsInput = Code(.outputIsInput)
        /// The index records no authenticator of the file (an `aether-ec/1` index), so a rebuild could not
        /// be checked; the caller must supply the file's SHA-256.
        public static let unverifiableIndex = Code(.unverifiableIndex)
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

    /// The coding error for an AetherIO failure: the guard's codes carried over, the rest `.fileSystem`.
    init(_ error: IOError, file: StaticString = #fileID, line: UInt = #line) {
        let code: Code
        switch error.code {
        case .fileChanged: code = .fileChanged
        case .notARegularFile: code = .notARegularFile
        case .outputIsInput: code = .outputIsInput
        default: code = .fileSystem
        }
        var message = error.message
        if let path = error.path, !message.contains(path) { message += " (\(path))" }
        self.init(code, message, file: file, line: line)
    }
}
