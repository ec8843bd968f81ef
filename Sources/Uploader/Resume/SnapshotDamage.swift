/// What is wrong with a stored snapshot (or idempotency journal) that `SnapshotVault.load` would not open.
/// The file is left exactly as found: the caller decides whether to remove it and start over.
public struct SnapshotDamage: Sendable, Hashable, CustomStringConvertible {
    /// Why the file was not accepted, as a value callers can compare.
    public struct Reason: Hashable, Sendable, CustomStringConvertible {
        private enum Base: Hashable, Sendable {
            case notARegularFile, wrongOwner, wrongMode, tooLarge, truncated, notASnapshot, unsupportedVersion
            case wrongKey, authenticationFailed
        }
        private let base: Base
        private init(_ base: Base) { self.base = base }
        /// A directory, FIFO, socket, device or symbolic link stands where the file belongs.
        public static let notARegularFile = Reason(.notARegularFile)
        /// The file belongs to another user.
        public static let wrongOwner = Reason(.wrongOwner)
        /// The file's mode is not 0600.
        public static let wrongMode = Reason(.wrongMode)
        /// The file is larger than any snapshot the vault writes.
        public static let tooLarge = Reason(.tooLarge)
        /// The file ends before its header, nonce or tag does.
        public static let truncated = Reason(.truncated)
        /// The file does not start with the snapshot magic.
        public static let notASnapshot = Reason(.notASnapshot)
        /// The format version byte is not one this build reads.
        public static let unsupportedVersion = Reason(.unsupportedVersion)
        /// The file names another upload key than the one asked for (or than its file name says).
        public static let wrongKey = Reason(.wrongKey)
        /// The AES-GCM tag does not verify: a changed byte, or another master key.
        public static let authenticationFailed = Reason(.authenticationFailed)
        public var description: String { "\(base)" }
    }

    /// Why the file was refused.
    public let reason: Reason
    /// The file, for messages.
    public let path: String

    /// Damage of `path` for `reason`.
    public init(reason: Reason, path: String) {
        self.reason = reason
        self.path = path
    }

    public var description: String { "\(path): \(reason)" }

    /// The error a caller that cannot go on throws: `.snapshotDamaged` naming the file and the next step.
    public var error: UploaderError {
        UploaderError(
            .snapshotDamaged,
            "the snapshot \(path) is damaged (\(reason)); it was left as it is. Remove it to restart that upload "
                + "from what the server holds")
    }
}
