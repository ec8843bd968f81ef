/// The one error type of AetherLinkLab: a code callers compare, a message for people, and where it was thrown.
public struct LinkLabError: Error, Sendable, CustomStringConvertible {
    /// What went wrong, as a value callers can compare. New codes do not break callers.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Base: Hashable, Sendable {
            case unavailable, invalidConfiguration, setupFailed, commandFailed, systemCall, timedOut
        }
        private let base: Base
        private init(_ base: Base) { self.base = base }
        /// This process cannot build a lab: not root, or a tool or device is missing.
        public static let unavailable = Code(.unavailable)
        /// A configuration value is out of range (the message names it).
        public static let invalidConfiguration = Code(.invalidConfiguration)
        /// Building the namespaces, devices or settings failed (the lab was torn down again).
        public static let setupFailed = Code(.setupFailed)
        /// A tool the lab runs (`ip`, `sysctl`, a child process) failed or could not be started.
        public static let commandFailed = Code(.commandFailed)
        /// A system call failed; the message names it and the system's reason.
        public static let systemCall = Code(.systemCall)
        /// Something awaited (a line, a listener, an exit) did not come in time.
        public static let timedOut = Code(.timedOut)
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
    public var description: String { "LinkLabError(\(code)): \(message)" }
}
