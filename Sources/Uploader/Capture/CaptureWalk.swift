public import AetherIO
import Glibc

/// One file of a capture: where it is, its name under the capture's root, and what it was when the walk saw it.
public struct CaptureFile: Sendable, Hashable {
    /// The path under the capture's root, `/`-separated, as bytes (a name need not be UTF-8 on Linux).
    public let relativePath: [UInt8]
    /// The file itself (the root joined with `relativePath`).
    public let path: FilePath
    /// The size, modification time, inode and device the walk saw (the journal's fingerprint).
    public let size: Int64
    public let modificationNanoseconds: Int64
    /// The status change time: a file rewritten with its modification time put back (`cp -p`, `rsync -t`, `tar x`)
    /// still changes it.
    public let changeNanoseconds: Int64
    public let inode: UInt64
    public let device: UInt64

    /// The relative path as text: itself when it is UTF-8, else with each invalid byte replaced (for messages only:
    /// such a name is refused for upload, never changed silently).
    public var name: String { String(decoding: relativePath, as: UTF8.self) }

    /// Whether the relative path is valid UTF-8 (every destination's names are).
    public var hasUTF8Name: Bool { String(validating: relativePath, as: UTF8.self) != nil }
}

/// Which files of a folder a capture takes: every regular file under the root, recursively, in the byte order of
/// their relative paths. Symbolic links are not followed unless asked (then a link that comes back to a directory
/// already on the way is a loop, skipped); FIFOs, devices and sockets are skipped with the reason; directories that
/// cannot be read are skipped with the error, the rest of the walk goes on. A pattern without `/` is matched
/// against a file's name, one with `/` against its relative path (`fnmatch(3)`, `*` crossing `/`).
struct CaptureWalk {
    struct Rules: Sendable {
        var include: [String] = []
        var exclude: [String] = []
        var followSymbolicLinks = false
        /// Stay on the root's file system: a directory or file on another (a mount point, a file bind-mounted into
        /// the folder, a followed link's target) is skipped, as `find -xdev` does.
        var oneFileSystem = false
        /// Directories never entered (the state directory when it lies inside the capture), by (device, inode).
        var avoid: Set<DirectoryIdentity> = []
    }

    struct DirectoryIdentity: Hashable, Sendable {
        let device: UInt64
        let inode: UInt64
    }

    /// A file or directory left out, and why; `failure` when it was meant to be taken and could not be read (the
    /// capture is then incomplete), not a deliberate skip (a FIFO, a link not followed).
    struct Skipped: Sendable {
        let relativePath: [UInt8]
        let reason: String
        var failure = false
    }

    private(set) var files: [CaptureFile] = []
    private(set) var skipped: [Skipped] = []
    private let rules: Rules

    /// Walks `root` (a directory, followed when it is a link given by the user) under `rules`.
    static func walk(_ root: FilePath, rules: Rules) throws(UploaderError) -> CaptureWalk {
        let status: FileStatus
        do {
            status = try Syscall.stat(root)
        } catch {
            throw UploaderError(.readFailed, "\(root) cannot be read: \(error.message)", errno: error.errno)
        }
        guard status.isDirectory else {
            throw UploaderError(.invalidArgument, "\(root) is \(status.kindName), not a directory")
        }
        var walk = CaptureWalk(rules: rules)
        if let kind = walk.pseudoFileSystem(status.device) {
            throw UploaderError(.invalidArgument, "\(root) is on \(kind), the kernel's own, with no files to upload")
        }
        var onTheWay: Set<DirectoryIdentity> = [DirectoryIdentity(device: status.device, inode: status.inode)]
        walk.enter(root, relative: [], device: status.device, onTheWay: &onTheWay)
        if Task.isCancelled { throw UploaderError(.cancelled, "the walk of \(root) was cancelled") }
        walk.files.sort { $0.relativePath.lexicographicallyPrecedes($1.relativePath) }
        return walk
    }

    private init(rules: Rules) { self.rules = rules }

    /// The kernel's own file systems: their files describe the running system, are not data, and some never end
    /// when read. A walk never enters one mounted inside the folder (`/proc`, `/sys` under `/`).
    static let pseudoFileSystems: Set<String> = [
        "proc", "sysfs", "devpts", "devtmpfs", "cgroup", "cgroup2", "debugfs", "tracefs", "securityfs", "bpf",
        "pstore", "configfs", "fusectl", "mqueue", "efivarfs", "autofs", "hugetlbfs", "nsfs", "binfmt_misc",
        "rpc_pipefs",
    ]

    /// The mounted file systems' types by device, read once per walk.
    private lazy var mounted: [UInt64: String] = Syscall.mountedFileSystemTypes()

    /// The name of the kernel file system on `device`, nil for any other (or when the mount table cannot be read).
    private mutating func pseudoFileSystem(_ device: UInt64) -> String? {
        mounted[device].flatMap { Self.pseudoFileSystems.contains($0) ? $0 : nil }
    }

    private mutating func enter(
        _ directory: FilePath, relative: [UInt8], device: UInt64, onTheWay: inout Set<DirectoryIdentity>
    ) {
        // A cancelled task (Ctrl-C) stops the walk at the next directory; the caller sees the cancellation.
        guard !Task.isCancelled else { return }
        let names: [FilePath]
        do {
            names = try Syscall.directoryEntries(directory)
        } catch {
            skipped.append(
                Skipped(
                    relativePath: relative.isEmpty ? [UInt8(ascii: ".")] : relative,
                    reason: "the directory cannot be read: \(error.message)", failure: true))
            return
        }
        for name in names {
            let path = directory.appending(name)
            let child = relative.isEmpty ? name.bytes : relative + [UInt8(ascii: "/")] + name.bytes
            var status: FileStatus
            do {
                status = try Syscall.lstat(path)
                if status.isSymbolicLink {
                    guard rules.followSymbolicLinks else {
                        skipped.append(Skipped(relativePath: child, reason: "a symbolic link (not followed)"))
                        continue
                    }
                    status = try Syscall.stat(path)
                }
            } catch {
                skipped.append(Skipped(relativePath: child, reason: "cannot be read: \(error.message)", failure: true))
                continue
            }
            if status.device != device {
                // Another file system: a mount point, a file bind-mounted here, or where a followed link leads.
                if let kind = pseudoFileSystem(status.device) {
                    skipped.append(Skipped(relativePath: child, reason: "a \(kind) file system (the kernel's own)"))
                    continue
                }
                if rules.oneFileSystem {
                    skipped.append(Skipped(relativePath: child, reason: "another file system (--one-file-system)"))
                    continue
                }
            }
            if status.isDirectory {
                let identity = DirectoryIdentity(device: status.device, inode: status.inode)
                if rules.avoid.contains(identity) { continue }
                guard onTheWay.insert(identity).inserted else {
                    skipped.append(Skipped(relativePath: child, reason: "a link back to a directory above it (a loop)"))
                    continue
                }
                enter(path, relative: child, device: status.device, onTheWay: &onTheWay)
                onTheWay.remove(identity)
                continue
            }
            guard status.isRegularFile else {
                skipped.append(Skipped(relativePath: child, reason: status.kindName + ", not a regular file"))
                continue
            }
            guard takes(child, name: name.bytes) else { continue }
            files.append(
                CaptureFile(
                    relativePath: child, path: path, size: status.size,
                    modificationNanoseconds: status.modificationNanoseconds,
                    changeNanoseconds: status.changeNanoseconds,
                    inode: status.inode, device: status.device))
        }
    }

    /// Whether the include and exclude patterns take the file: included when there are no include patterns or one
    /// matches, and no exclude pattern matches.
    private func takes(_ relative: [UInt8], name: [UInt8]) -> Bool {
        let included = rules.include.isEmpty || rules.include.contains { Self.matches($0, relative, name: name) }
        return included && !rules.exclude.contains { Self.matches($0, relative, name: name) }
    }

    /// Whether `pattern` matches: against the name when it has no `/`, else against the relative path.
    static func matches(_ pattern: String, _ relative: [UInt8], name: [UInt8]) -> Bool {
        let subject = pattern.contains("/") ? relative : name
        return unsafe pattern.withCString { pattern in
            unsafe (subject + [0]).withUnsafeBufferPointer { bytes in
                unsafe bytes.withMemoryRebound(to: CChar.self) { text in
                    unsafe fnmatch(pattern, text.baseAddress, 0) == 0
                }
            }
        }
    }
}
