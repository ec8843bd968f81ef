/// The one error type of AetherScheduling: a code callers compare, a message for people, and where it was thrown.
///
/// Messages never carry key material or file contents.
public struct SchedulingError: Error, Sendable, CustomStringConvertible {
    /// What went wrong, as a value callers can compare. New codes do not break callers.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Base: Hashable, Sendable {
            case invalidArgument, invalidConstant, circuitOpen, unreadableSource
        }
        private let base: Base
        private init(_ base: Base) { self.base = base }
        /// An argument is outside its documented range.
        public static let invalidArgument = Code(.invalidArgument)
        /// A tier constant violates its validation rule.
        public static let invalidConstant = Code(.invalidConstant)
        /// The circuit breaker refuses requests.
        public static let circuitOpen = Code(.circuitOpen)
        /// A sysfs, procfs or netlink source could not be read.
        public static let unreadableSource = Code(.unreadableSource)
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

    public var description: String { "SchedulingError(\(code)): \(message)" }
}
