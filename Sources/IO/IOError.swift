/// The one error type of AetherIO: a code callers compare, a message for people, and where it was thrown.
///
/// Messages name paths and errno values, never file contents or key material.
public struct IOError: Error, Sendable, CustomStringConvertible {
    /// What went wrong, as a value callers can compare. New codes do not break callers.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Base: Hashable, Sendable {
            case systemCall, notARegularFile, fileChanged, unexpectedEndOfFile, invalidArgument
            case ioUringUnavailable, invalidDomainTag, invalidHex, cryptoFailure, wrongOwner, outputIsInput
        }
        private let base: Base
        private init(_ base: Base) { self.base = base }
        /// A system call failed; `errno` and `path` say which and where.
        public static let systemCall = Code(.systemCall)
        /// The path is a directory, FIFO, device or other non-regular file.
        public static let notARegularFile = Code(.notARegularFile)
        /// The file was truncated, appended to, replaced or modified while it was read.
        public static let fileChanged = Code(.fileChanged)
        /// The file ended before the requested range did.
        public static let unexpectedEndOfFile = Code(.unexpectedEndOfFile)
        /// A caller passed an argument outside its documented range.
        public static let invalidArgument = Code(.invalidArgument)
        /// io_uring is refused (EPERM/ENOSYS) or failed to set up.
        public static let ioUringUnavailable = Code(.ioUringUnavailable)
        /// A domain-separation tag was empty or not ASCII (BUG-14).
        public static let invalidDomainTag = Code(.invalidDomainTag)
        /// A hex string did not parse (BUG-18: distinct from "not equal").
        public static let invalidHex = Code(.invalidHex)
        /// A crypto library call reported failure.
        public static let cryptoFailure = Code(.cryptoFailure)
        /// A file is owned by another user than the effective user (refused, left as it is).
        public static let wrongOwner = Code(.wrongOwner)
        /// An output path names an input (same device and inode, or inside a directory being read).
        public static let outputIsInput = Code(.outputIsInput)
        public var description: String { "\(base)" }
    }

    /// The error's code.
    public let code: Code
    /// A message for people.
    public let message: String
    /// The errno of the failed system call, when there was one.
    public let errno: Int32?
    /// The path involved, when there was one.
    public let path: String?
    /// Source location that threw.
    public let location: String

    /// Creates an error; `location` defaults to the caller's file and line.
    public init(
        _ code: Code, _ message: String, errno: Int32? = nil, path: String? = nil,
        file: StaticString = #fileID, line: UInt = #line
    ) {
        self.code = code
        self.message = message
        self.errno = errno
        self.path = path
        self.location = "\(file):\(line)"
    }

    public var description: String {
        var text = "IOError(\(code)): \(message)"
        if let path { text += " [path: \(path)]" }
        if let errno { text += " [errno \(errno)]" }
        return text
    }
}
