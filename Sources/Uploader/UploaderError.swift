/// The one error type of AetherUploader: a code callers compare, a message for people, and where it was thrown.
///
/// Messages never carry key material or file contents.
public struct UploaderError: Error, Sendable, CustomStringConvertible {
    /// What went wrong, as a value callers can compare. New codes do not break callers.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Base: Hashable, Sendable {
            case invalidArgument, cancelled, verificationFailed
            case stateDirectoryRefused, snapshotDamaged, masterKeyDamaged, systemCall, unknownFeatureFlag
        }
        private let base: Base
        private init(_ base: Base) { self.base = base }
        /// An argument is outside its documented range.
        public static let invalidArgument = Code(.invalidArgument)
        /// The upload was cancelled.
        public static let cancelled = Code(.cancelled)
        /// The server's root or receipt does not match.
        public static let verificationFailed = Code(.verificationFailed)
        /// The state directory is not a directory of this user (or not mode 0700); it was left as it is.
        public static let stateDirectoryRefused = Code(.stateDirectoryRefused)
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
    /// Source location that threw.
    public let location: String

    /// Creates an error; `location` defaults to the caller's file and line.
    public init(_ code: Code, _ message: String, file: StaticString = #fileID, line: UInt = #line) {
        self.code = code
        self.message = message
        self.location = "\(file):\(line)"
    }

    public var description: String { "UploaderError(\(code)): \(message)" }
}
