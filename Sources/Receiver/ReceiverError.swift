#if canImport(Glibc)
    import Glibc
#endif

/// The one error type of AetherReceiver: a code callers compare (it names the RFC 9457 problem the HTTP
/// layer answers with, `docs/PROTOCOL.md` section 7), a message for people, and where it was thrown.
///
/// Messages never carry key material, tokens or file contents.
public struct ReceiverError: Error, Sendable, CustomStringConvertible {
    /// What went wrong, as a value callers can compare. New codes do not break callers.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        /// The problem name (`urn:aether:problem:{name}`) and the HTTP status it is answered with.
        public let name: String
        /// The HTTP status the receiver answers with.
        public let status: Int
        private init(_ name: String, _ status: Int) {
            self.name = name
            self.status = status
        }
        /// A header, path or body does not parse or is out of range.
        public static let malformedRequest = Code("malformed-request", 400)
        /// `POST /uploads` carried none of the native, tus or IETF headers.
        public static let unknownProtocol = Code("unknown-protocol", 400)
        /// No or a wrong bearer token.
        public static let unauthorized = Code("unauthorized", 401)
        /// The upload belongs to another client.
        public static let forbidden = Code("forbidden", 403)
        /// No upload has this id.
        public static let notFound = Code("not-found", 404)
        /// The request's offset is not the stored one (IETF, tus).
        public static let offsetMismatch = Code("offset-mismatch", 409)
        /// The chunk index is stored with other bytes.
        public static let duplicateChunk = Code("duplicate-chunk", 409)
        /// A continuation (`docs/PROTOCOL.md` 3.2.2) starts where the receiver holds no prefix of the chunk: `offset`
        /// is what it holds (0: nothing), answered in `Aether-Partial`.
        public static let partialMismatch = Code("partial-mismatch", 409)
        /// Completion was asked while chunks are missing.
        public static let incomplete = Code("incomplete", 409)
        /// The upload is not a capture manifest whose every file this receiver holds as listed (`GET
        /// /uploads/{id}/capture`).
        public static let captureMismatch = Code("capture-mismatch", 409)
        /// The upload is already complete: it takes no more bytes (its receipt is read with the completion, which
        /// is idempotent, or with `HEAD`).
        public static let alreadyComplete = Code("already-complete", 409)
        /// The upload expired or was cancelled.
        public static let expired = Code("expired", 410)
        /// A size, count or body is over a limit.
        public static let tooLarge = Code("too-large", 413)
        /// A spot check's ranges add up to more bytes than the receiver reads for one challenge
        /// (`challenge-bytes`).
        public static let challengeTooLarge = Code("challenge-too-large", 413)
        /// A spot check of another version than 2 (a version-1 challenge, answered with hashes that prove nothing).
        public static let challengeVersion = Code("challenge-version", 400)
        /// The request's content type is not the one the operation takes.
        public static let unsupportedMediaType = Code("unsupported-media-type", 415)
        /// The bytes do not match the digest sent with them.
        public static let digestMismatch = Code("digest-mismatch", 422)
        /// The body's length is not the declared one.
        public static let lengthMismatch = Code("length-mismatch", 422)
        /// The commitment chain recomputed from stored chunks differs from the client's.
        public static let chainBroken = Code("chain-broken", 422)
        /// The Merkle root recomputed from stored chunks differs from the client's.
        public static let merkleMismatch = Code("merkle-mismatch", 422)
        /// A proof-of-possession answer failed or its challenge expired.
        public static let possessionFailed = Code("possession-failed", 403)
        /// Too many uploads or requests from this client at once.
        public static let tooManyRequests = Code("too-many-requests", 429)
        /// Storage failed (disk full, I/O error, catalogue error); nothing acknowledged was lost.
        public static let storageFailed = Code("storage-failed", 507)
        /// The receiver is shutting down or cannot serve now.
        public static let unavailable = Code("unavailable", 503)
        /// The catalogue holds a schema newer than this receiver knows (a newer receiver migrated it).
        public static let schemaTooNew = Code("schema-too-new", 503)
        public var description: String { name }
    }

    /// The error's code.
    public let code: Code
    /// A message for people.
    public let message: String
    /// The chunk the problem is about, when there is one.
    public let chunk: Int?
    /// The offset the receiver holds, for offset problems.
    public let offset: Int64?
    /// The system error behind a storage failure (`EMFILE`, `ENOSPC`, ...), when there is one.
    public let errno: Int32?
    /// Source location that threw.
    public let location: String

    /// Creates an error; `location` defaults to the caller's file and line.
    public init(
        _ code: Code, _ message: String, chunk: Int? = nil, offset: Int64? = nil, errno: Int32? = nil,
        file: StaticString = #fileID, line: UInt = #line
    ) {
        self.code = code
        self.message = message
        self.chunk = chunk
        self.offset = offset
        self.errno = errno
        self.location = "\(file):\(line)"
    }

    public var description: String { "ReceiverError(\(code)): \(message)" }

    /// Whether storage failed because it is full: no space on the device (`ENOSPC`) or over a quota (`EDQUOT`).
    public var isOutOfSpace: Bool { errno == ENOSPC || errno == EDQUOT }
}
