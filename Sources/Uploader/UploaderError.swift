/// The one error type of AetherUploader: a code callers compare, a message for people, and where it was thrown.
///
/// Messages never carry key material or file contents.
public struct UploaderError: Error, Sendable, CustomStringConvertible {
    /// What went wrong, as a value callers can compare. New codes do not break callers.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Base: Hashable, Sendable {
            case invalidArgument, cancelled, verificationFailed
            case transportFailed, readFailed, fileChanged, snapshotDamaged, snapshotUnavailable, circuitOpen
            case queueFull, integrityFailed
            case stateDirectoryRefused, masterKeyDamaged, systemCall, unknownFeatureFlag
            case alreadyRunning
            case fileTruncated, fileReplaced, followUnsupported
        }
        private let base: Base
        private init(_ base: Base) { self.base = base }
        /// An argument is outside its documented range.
        public static let invalidArgument = Code(.invalidArgument)
        /// The upload was cancelled.
        public static let cancelled = Code(.cancelled)
        /// The server's root or receipt does not match.
        public static let verificationFailed = Code(.verificationFailed)
        /// A backend request failed with a code that is not retried, or kept failing after every retry.
        public static let transportFailed = Code(.transportFailed)
        /// The file could not be read.
        public static let readFailed = Code(.readFailed)
        /// The file changed while it was uploaded, or between runs in a way that cannot be resumed.
        public static let fileChanged = Code(.fileChanged)
        /// A followed file (`--follow`) got shorter than what was already read.
        public static let fileTruncated = Code(.fileTruncated)
        /// A followed file's path names another file now (renamed over, or deleted and created again).
        public static let fileReplaced = Code(.fileReplaced)
        /// The destination's protocol cannot take an upload whose length is unknown (`--follow` over a tus server
        /// without creation-defer-length), or a feature that needs the whole file was asked for with it.
        public static let followUnsupported = Code(.followUnsupported)
        /// The resume snapshot could not be written or read (file system).
        public static let snapshotUnavailable = Code(.snapshotUnavailable)
        /// The circuit breaker stayed open for longer than the upload may wait.
        public static let circuitOpen = Code(.circuitOpen)
        /// The upload queue is full (backpressure): submit again once an upload finishes.
        public static let queueFull = Code(.queueFull)
        /// The Merkle tree or commitment chain refused a chunk (more chunks than it can hold).
        public static let integrityFailed = Code(.integrityFailed)
        /// The state directory is not a directory of this user (or not mode 0700); it was left as it is.
        public static let stateDirectoryRefused = Code(.stateDirectoryRefused)
        /// Another process runs the same upload (same file, same destination, same state directory) now.
        public static let alreadyRunning = Code(.alreadyRunning)
        /// A stored snapshot (or idempotency journal) is damaged; the message names the file, left as it is.
        public static let snapshotDamaged = Code(.snapshotDamaged)
        /// The state directory's master key file is damaged; it was left as it is.
        public static let masterKeyDamaged = Code(.masterKeyDamaged)
        /// A system call failed; the message names the call, the file and the errno text.
        public static let systemCall = Code(.systemCall)
        /// A `--flags` list names a feature flag that does not exist.
        public static let unknownFeatureFlag = Code(.unknownFeatureFlag)
        public var description: String { "\(base)" }
    }

    /// The error's code.
    public let code: Code
    /// A message for people.
    public let message: String
    /// The errno of the system call that failed underneath, when there was one (callers test it, e.g. EMFILE, rather
    /// than the message's words).
    public let errno: Int32?
    /// Source location that threw.
    public let location: String

    /// Creates an error; `location` defaults to the caller's file and line.
    public init(
        _ code: Code, _ message: String, errno: Int32? = nil, file: StaticString = #fileID, line: UInt = #line
    ) {
        self.code = code
        self.message = message
        self.errno = errno
        self.location = "\(file):\(line)"
    }

    public var description: String { "UploaderError(\(code)): \(message)" }
}
