public import AetherIO
public import AetherIntegrity

/// A folder checked against its capture manifest (`CaptureManifest.verify(directory:)`, `aether verify DIR
/// MANIFEST`): every file the manifest lists read once and its size and SHA-256 compared; the files of the folder the
/// manifest does not list are named too.
public struct CaptureVerification: Sendable, Hashable {
    /// What is wrong with one listed file.
    public enum Problem: Sendable, Hashable {
        /// Not in the folder (or not a regular file the walk takes: a link, a FIFO, an unreadable directory's).
        case missing
        /// Another size than the manifest's.
        case sizeDiffers(expected: Int64, actual: Int64)
        /// The same size, other bytes.
        case contentDiffers
        /// It could not be read.
        case unreadable(String)
    }

    /// Listed files found intact.
    public let intact: Int
    /// Listed files that are not, by relative path, in path order.
    public let problems: [(path: String, problem: Problem)]
    /// Files of the folder the manifest does not list, by relative path (bytes, which may not be UTF-8).
    public let unlisted: [[UInt8]]

    /// True when every listed file is intact (unlisted files do not change it).
    public var isIntact: Bool { problems.isEmpty }

    public static func == (left: Self, right: Self) -> Bool {
        left.intact == right.intact && left.unlisted == right.unlisted
            && left.problems.map(\.path) == right.problems.map(\.path)
            && left.problems.map(\.problem) == right.problems.map(\.problem)
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(intact)
        hasher.combine(unlisted)
        for (path, problem) in problems {
            hasher.combine(path)
            hasher.combine(problem)
        }
    }
}

extension CaptureManifest {
    /// Checks `directory` against this manifest: the folder is walked as a capture walks it (links not followed,
    /// FIFOs and devices left out, the kernel's file systems never entered), each listed file is read once (its
    /// SHA-256 at the speed of one pass) and compared with its line. The manifest file itself, at the top, is not
    /// unlisted. Throws only when the folder cannot be walked at all.
    public func verify(directory: FilePath) throws(UploaderError) -> CaptureVerification {
        let walk = try CaptureWalk.walk(directory, rules: CaptureWalk.Rules())
        var found: [[UInt8]: CaptureFile] = [:]
        for file in walk.files { found[file.relativePath] = file }
        // What the walk could not read (a directory without permission): a listed file under it is unreadable, not
        // missing.
        var unread: [[UInt8]: String] = [:]
        for skip in walk.skipped where skip.failure { unread[skip.relativePath] = skip.reason }
        func unreadable(_ relative: [UInt8]) -> String? {
            if unread.isEmpty { return nil }
            if let reason = unread[relative] { return reason }
            if let reason = unread[[UInt8(ascii: ".")]] { return "the folder: " + reason }
            var prefix = relative
            while let slash = prefix.lastIndex(of: UInt8(ascii: "/")) {
                prefix = Array(prefix[..<slash])
                if let reason = unread[prefix] {
                    return String(decoding: prefix, as: UTF8.self) + ": " + reason
                }
            }
            return nil
        }
        var intact = 0
        var problems: [(path: String, problem: CaptureVerification.Problem)] = []
        var listed: Set<[UInt8]> = []
        for entry in files {
            let relative = Array(entry.path.utf8)
            listed.insert(relative)
            guard let file = found[relative] else {
                problems.append((entry.path, unreadable(relative).map { .unreadable($0) } ?? .missing))
                continue
            }
            guard file.size == entry.size else {
                problems.append((entry.path, .sizeDiffers(expected: entry.size, actual: file.size)))
                continue
            }
            do {
                let digest = try Self.sha256(of: file)
                if digest.hex == entry.sha256 {
                    intact += 1
                } else {
                    problems.append((entry.path, .contentDiffers))
                }
            } catch {
                problems.append((entry.path, .unreadable(error.message)))
            }
        }
        let manifestName = Array(CaptureManifest.name.utf8)
        let unlisted = walk.files.map(\.relativePath).filter { !listed.contains($0) && $0 != manifestName }
        return CaptureVerification(intact: intact, problems: problems, unlisted: unlisted)
    }

    /// The SHA-256 of the walked `walked`, read once under the change guard (a file that changes while it is read
    /// is an error, not a digest of a mixture); the file opened must be the one the walk saw (a path replaced
    /// since, by a link to elsewhere say, is refused rather than read).
    static func sha256(of walked: CaptureFile) throws(IOError) -> Digest32 {
        let file = try GuardedFile(path: walked.path)
        guard file.identity.device == walked.device, file.identity.inode == walked.inode else {
            throw IOError(.fileChanged, "it was replaced since the folder was walked", path: walked.path.description)
        }
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 4 << 20, alignment: 64)
        defer { unsafe buffer.deallocate() }
        var hash = SHA256()
        var offset: Int64 = 0
        while true {
            let read = try unsafe file.read(at: offset, into: buffer)
            guard read > 0 else { break }
            unsafe hash.update(UnsafeRawBufferPointer(rebasing: buffer[0..<read]))
            offset += Int64(read)
        }
        try file.verifyUnchanged()
        return hash.finalize()
    }
}
