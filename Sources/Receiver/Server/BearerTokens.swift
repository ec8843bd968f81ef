public import AetherIO

#if canImport(Glibc)
    import Glibc
#endif

/// The bearer tokens `aether serve --tokens F` accepts, each with the client name uploads are owned by.
///
/// The file holds one `name:token` or one bare `token` per line (a bare token's client is named `token-LINE`);
/// blank lines and lines starting with `#` are skipped. It must be a regular file that neither its group nor other
/// users can read or write (mode `0600` or `0400`), or the receiver refuses to start. Every token is at least
/// `minimumTokenBytes` long, no token and no name is given twice (a token shared by two names would make uploads
/// of one client the other's). A refusal names the line, never a token. Tokens are compared in constant time and
/// never printed: the description shows the names only.
public struct BearerTokens: Sendable, CustomStringConvertible {
    private let entries: [(name: String, token: [UInt8])]

    /// The shortest token accepted, in bytes (128 bits of hex, or 96 of base64).
    public static let minimumTokenBytes = 16

    /// The client names, in file order.
    public var names: [String] { entries.map(\.name) }

    /// Tokens from `entries` (`name`, `token`): names and tokens non-empty printable ASCII without spaces, no `:`
    /// in a name, tokens of `minimumTokenBytes` or more, no name and no token twice.
    public init(_ entries: [(name: String, token: String)]) throws(ReceiverError) {
        try self.init(
            labelled: entries.enumerated().map { ("token entry \($0.offset + 1)", $0.element.0, $0.element.1) })
    }

    /// `entries` with the label each refusal names (`line 3`, `token entry 2`).
    private init(labelled entries: [(label: String, name: String, token: String)]) throws(ReceiverError) {
        var parsed: [(name: String, token: [UInt8])] = []
        for entry in entries {
            guard Self.isToken(entry.token), !entry.name.isEmpty, Self.isToken(entry.name), !entry.name.contains(":")
            else {
                throw ReceiverError(.malformedRequest, "\(entry.label) is not a name and a token of printable ASCII")
            }
            guard entry.token.utf8.count >= Self.minimumTokenBytes else {
                throw ReceiverError(
                    .malformedRequest,
                    "\(entry.label): the token is shorter than \(Self.minimumTokenBytes) bytes (make one with"
                        + " `openssl rand -hex 16`)")
            }
            guard !parsed.contains(where: { $0.name == entry.name }) else {
                throw ReceiverError(.malformedRequest, "\(entry.label): the client name \(entry.name) is given twice")
            }
            let token = Array(entry.token.utf8)
            // Constant time, as every comparison of a token.
            if let earlier = parsed.first(where: { ConstantTime.equals($0.token, token) }) {
                throw ReceiverError(
                    .malformedRequest, "\(entry.label): the token of \(entry.name) is also the token of \(earlier.name)"
                )
            }
            parsed.append((entry.name, token))
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
            guard status.mode & 0o077 == 0 else {
                throw ReceiverError(
                    .malformedRequest,
                    "the token file \(path) is readable or writable by its group or other users (mode "
                        + "\(String(status.mode & 0o777, radix: 8))); chmod 600 it")
            }
            bytes = try Syscall.readAll(descriptor, limit: 1 << 20, path: path.description)
        } catch let error as ReceiverError {
            throw error
        } catch {
            throw ReceiverError(.malformedRequest, "cannot read the token file \(path): \(error)")
        }
        var entries: [(label: String, name: String, token: String)] = []
        for (number, line) in String(decoding: bytes, as: UTF8.self).split(
            separator: "\n", omittingEmptySubsequences: false
        ).enumerated() {
            let text = line.hasSuffix("\r") ? line.dropLast() : line[...]
            let trimmed = text.trimmingSpaces()
            if trimmed.isEmpty || trimmed.hasPrefix("#") { continue }
            let label = "line \(number + 1)"
            if let colon = trimmed.firstIndex(of: ":") {
                entries.append((label, String(trimmed[..<colon]), String(trimmed[trimmed.index(after: colon)...])))
            } else {
                entries.append((label, "token-\(number + 1)", String(trimmed)))
            }
        }
        do {
            try self.init(labelled: entries)
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
