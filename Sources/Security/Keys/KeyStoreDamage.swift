/// Why a key store item is damaged. Each is reported (`SecurityError.keyStoreDamaged`) and the item is
/// left exactly as found.
public enum KeyStoreDamage: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// Shorter than its header says.
    case truncated
    /// Not a key store item: wrong magic, trailing bytes, bad field values, too large.
    case garbage
    /// A format version this build does not read.
    case unsupportedVersion
    /// The SHA-256 checksum does not match the content.
    case checksumMismatch
    /// The content names another host than the item's name.
    case otherHostID
    /// Permissions other than 0600.
    case wrongMode
    /// Owned by another user.
    case wrongOwner
    /// A symbolic link, directory, device or other non-regular file.
    case notARegularFile

    public var description: String {
        switch self {
        case .truncated: "truncated"
        case .garbage: "not in the key store format"
        case .unsupportedVersion: "unsupported format version"
        case .checksumMismatch: "checksum mismatch"
        case .otherHostID: "holds another host's keys"
        case .wrongMode: "mode is not 0600"
        case .wrongOwner: "owned by another user"
        case .notARegularFile: "not a regular file"
        }
    }

    /// The error reported for the item file at `path` with this damage: it names the file, the host and the
    /// damage (never content), and what to do.
    public func error(hostID: HostID, path: String, file: StaticString = #fileID, line: UInt = #line) -> SecurityError {
        SecurityError(
            .keyStoreDamaged,
            "key store item \(path) for host \(hostID) is damaged (\(self)); it is left as it is: move it aside "
                + "(for example to \(path).damaged) and pair again",
            file: file, line: line)
    }

    /// The error reported for an item with this damage; it names the host and the damage, never content.
    public func error(hostID: HostID, file: StaticString = #fileID, line: UInt = #line) -> SecurityError {
        SecurityError(.keyStoreDamaged, "key store item for host \(hostID) is damaged: \(self)", file: file, line: line)
    }
}
