import AetherIO

#if canImport(Glibc)
    import Glibc
#endif

/// Writes a blob in place from `offset` (`pwrite`), with no staging file and no rename:
/// - `.append`: an IETF/tus append at a stream's recorded offset; a discard truncates back to it, so a refused
///   append leaves the file as it was.
/// - `.region`: a native chunk at `index * chunkSize` of its upload's stream file. The region becomes part of the
///   upload only through the catalogue receipt committed after `commit()`, so the bytes of a region written but
///   never recorded are never read; a discard zeroes them (as the reserved file held), and every commit also
///   syncs the directory (the first request of an upload creates the file, and a concurrent one may be
///   acknowledged first). The engine lets one request at a time write a region (`UploadEngine.claimRegion`). A
///   region let go with `durable()` then `abandon()` keeps its bytes (a cut chunk's received prefix); a writer made
///   with `kept` bytes continues such a prefix, and its discard zeroes the whole region.
final class PlacedBlobWriter: BlobWriter {
    enum Kind {
        case append
        case region(directory: FilePath)
    }

    private var descriptor: Int32
    private let path: FilePath
    private let kind: Kind
    private let start: Int64
    private var synced = false
    private(set) var bytesWritten: Int64 = 0

    init(descriptor: Int32, path: FilePath, kind: Kind, offset: Int64, kept: Int64 = 0) {
        self.descriptor = descriptor
        self.path = path
        self.kind = kind
        self.start = offset
        self.bytesWritten = kept
    }

    deinit { discard() }

    func write(_ bytes: UnsafeRawBufferPointer) throws(ReceiverError) {
        guard descriptor >= 0 else { throw ReceiverError(.storageFailed, "the blob was closed") }
        try DirectoryBlobStore.storage { () throws(IOError) in
            try unsafe Syscall.pwriteFully(
                descriptor, from: bytes, offset: start + bytesWritten, path: path.description)
        }
        bytesWritten += Int64(bytes.count)
        synced = false
    }

    func durable() throws(ReceiverError) {
        guard descriptor >= 0 else { throw ReceiverError(.storageFailed, "the blob was closed") }
        if synced { return }
        try DirectoryBlobStore.storage { () throws(IOError) in try Syscall.fsync(descriptor, path: path.description) }
        synced = true
    }

    func commit() throws(ReceiverError) {
        try durable()
        Syscall.close(descriptor)
        descriptor = -1
        if case .region(let directory) = kind {
            try DirectoryBlobStore.storage { () throws(IOError) in try Syscall.syncDirectory(directory) }
        }
    }

    /// Closes the file and leaves what was written: a newer request owns the region now and is writing it whole.
    func abandon() {
        guard descriptor >= 0 else { return }
        Syscall.close(descriptor)
        descriptor = -1
    }

    /// Undoes what was written (best effort: what a failure leaves is past the recorded offset or in a region no
    /// receipt covers, never read), then closes the file.
    func discard() {
        guard descriptor >= 0 else { return }
        switch kind {
        case .append: try? Syscall.ftruncate(descriptor, length: start, path: path.description)
        case .region: zeroWritten()
        }
        Syscall.close(descriptor)
        descriptor = -1
    }

    private func zeroWritten() {
        let zeros = [UInt8](repeating: 0, count: Int(min(bytesWritten, 1 << 20)))
        var done: Int64 = 0
        while done < bytesWritten {
            let count = Int(min(Int64(zeros.count), bytesWritten - done))
            let wrote: Bool = unsafe zeros.withUnsafeBytes { raw in
                do {
                    try unsafe Syscall.pwriteFully(
                        descriptor, from: UnsafeRawBufferPointer(rebasing: raw[0..<count]), offset: start + done,
                        path: path.description)
                    return true
                } catch {
                    return false
                }
            }
            guard wrote else { break }
            done += Int64(count)
        }
    }
}
