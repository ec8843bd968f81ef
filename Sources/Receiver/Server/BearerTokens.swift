public import AetherIO

#if canImport(Glibc)
    import Glibc
#endif

/// The bearer tokens `aether serve --tokens F` accepts, each with the client name uploads are owned by.
///
/// The file holds one `name:token` or one bare `token` per line (a bare token's client is named `token-LINE`);
/// blank lines and lines starting with `#` are skipped. It must be a regular file that other users cannot read
/// (no `o+r`), or the receiver refuses to start. Tokens are compared in constant time and never printed: the
/// description shows the names only.
public struct BearerTokens: Sendable, CustomStringConvertible {
    private let entries: [(name: String, token: [UInt8])]

    /// The client names, in file order.
    public var names: [String] { entries.map(\.name) }

    /// Tokens from `entries` (`name`, `token`); names and tokens must be non-empty printable ASCII without
    /// spaces or `:` in the name.
    public init(_ entries: [(name: String, token: String)]) throws(ReceiverError) {
        var parsed: [(name: String, token: [UInt8])] = []
        for (index, entry) in entries.enumerated() {
            guard Self.isToken(entry.token), !entry.name.isEmpty, Self.isToken(entry.name), !entry.name.contains(":")
            else {
                throw ReceiverError(
                    .malformedRequest, "token entry \(index + 1) is not a name and a token of printable ASCII")
            }
            guard !parsed.contains(where: { $0.name == entry.name }) else {
                throw ReceiverError(.malformedRequest, "the client name \(entry.name) is given twice")
            }
            parsed.append((entry.name, Array(entry.token.utf8)))
        }
        guard !parsed.isEmpty else { throw ReceiverError(.malformedRequest, "no token given") }
        self.entries = parsed
    }

    /// Reads the token file at `path`.
    public init(contentsOf path: FilePath) throws(ReceiverError) {
        let bytes: [UInt8]
        do {
            let descriptor = try Syscall.open(path, flags: O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOFOLLOW)
            defer { Syscall.close(descriptor) }
            let status = try Syscall.fstat(descriptor, path: path.description)
            guard status.isRegularFile else {
                throw ReceiverError(.malformedRequest, "the token file \(path) is not a regular file")
            }
            guard status.mode & 0o004 == 0 else {
                throw ReceiverError(
                    .malformedRequest, "the token file \(path) is readable by other users; chmod o-r it")
            }
            bytes = try Syscall.readAll(descriptor, limit: 1 << 20, path: path.description)
        } catch let error as ReceiverError {
            throw error
        } catch {
            throw ReceiverError(.malformedRequest, "cannot read the token file \(path): \(error)")
        }
        var entries: [(name: String, token: String)] = []
        for (number, line) in String(decoding: bytes, as: UTF8.self).split(
            separator: "\n", omittingEmptySubsequences: false
        ).enumerated() {
            let text = line.hasSuffix("\r") ? line.dropLast() : line[...]
            let trimmed = text.trimmingSpaces()
            if trimmed.isEmpty || trimmed.hasPrefix("#") { continue }
            if let colon = trimmed.firstIndex(of: ":") {
                entries.append((String(trimmed[..<colon]), String(trimmed[trimmed.index(after: colon)...])))
            } else {
                entries.append(("token-\(number + 1)", String(trimmed)))
            }
        }
        do {
            try self.init(entries)
        } catch {
            // The message names a line number, never a token.
            throw ReceiverError(.malformedRequest, "the token file \(path): \(error.message)")
        }
    }

    /// The client whose token `authorization` (`Bearer TOKEN`) carries, or nil. Every token is compared, in
    /// constant time, whatever matched first.
    public func client(forAuthorization authorization: String?) -> String? {
        guard let authorization else { return nil }
        let parts = authorization.split(separator: " ", maxSplits: 1, omittingEmptySubsequences: true)
        guard parts.count == 2, parts[0].lowercased() == "bearer" else { return nil }
        let presented = Array(parts[1].trimmingSpaces().utf8)
        var found: String?
        for entry in entries where ConstantTime.equals(entry.token, presented) && found == nil {
            found = entry.name
        }
        return found
    }

    public var description: String { "BearerTokens(\(names.joined(separator: ", ")))" }

    private static func isToken(_ text: String) -> Bool {
        !text.isEmpty && text.utf8.count <= 4096 && text.utf8.allSatisfy { $0 > 0x20 && $0 < 0x7F }
    }
}

extension Substring {
    /// The text without leading and trailing spaces and tabs.
    fileprivate func trimmingSpaces() -> Substring {
        var text = self
        while let first = text.first, first == " " || first == "\t" { text = text.dropFirst() }
        while let last = text.last, last == " " || last == "\t" { text = text.dropLast() }
        return text
    }
}
