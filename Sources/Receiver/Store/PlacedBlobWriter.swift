import AetherIO

#if canImport(Glibc)
    import Glibc
#endif

/// Writes one region of a blob in place (a native chunk at `index * chunkSize` of its upload's stream file): no
/// staging file, no rename per chunk and no copy at completion. The region becomes part of the upload only through
/// the catalogue receipt committed after `commit()`, so the bytes of a region written but never recorded are never
/// read; a later request for the same index writes the region again. The engine lets one request at a time write
/// a region (`UploadEngine.claimRegion`).
final class PlacedBlobWriter: BlobWriter {
    private var descriptor: Int32
    private let path: FilePath
    private let directory: FilePath
    private let start: Int64
    private var synced = false
    private(set) var bytesWritten: Int64 = 0

    init(descriptor: Int32, path: FilePath, directory: FilePath, offset: Int64) {
        self.descriptor = descriptor
        self.path = path
        self.directory = directory
        self.start = offset
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

    /// Durable, and the file's name too: the first request of an upload creates the file, and a concurrent one may
    /// be acknowledged first, so every commit syncs the directory (one rename per chunk did the same before).
    func commit() throws(ReceiverError) {
        try durable()
        Syscall.close(descriptor)
        descriptor = -1
        try DirectoryBlobStore.storage { () throws(IOError) in try Syscall.syncDirectory(directory) }
    }

    /// Closes the file and leaves the region as it is: a newer request owns it now and is writing it whole.
    func abandon() {
        guard descriptor >= 0 else { return }
        Syscall.close(descriptor)
        descriptor = -1
    }

    /// Zeroes what was written (an unrecorded region holds zeros, as the reserved file did, so a refused chunk
    /// leaves the stored bytes as they were), then closes the file. The zeroing is best effort: what a failure
    /// leaves is in a region no receipt covers, never read.
    func discard() {
        guard descriptor >= 0 else { return }
        if bytesWritten > 0 {
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
        Syscall.close(descriptor)
        descriptor = -1
    }
}
