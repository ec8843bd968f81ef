/// The k + m shards of one stripe in a single 64-byte-aligned allocation, reused call after call so that
/// encoding and decoding allocate nothing.
///
/// Fill the data shards (or the surviving shards), then let a `ReedSolomonEncoder` write the parity or a
/// `ReedSolomonDecoder` rebuild what is missing. Not `Sendable`: one stripe belongs to one task at a time.
@safe public final class ShardStripe {
    /// The number of shards, k + m.
    public let shardCount: Int
    /// Bytes each shard can hold.
    public let shardCapacity: Int

    private let stride: Int
    private let storage: UnsafeMutableRawPointer
    /// Scratch arrays of shard pointers handed to the kernels (allocated once here, not per call).
    let inputPointers: UnsafeMutablePointer<UnsafePointer<UInt8>?>
    let outputPointers: UnsafeMutablePointer<UnsafeMutablePointer<UInt8>?>

    /// A zero-filled stripe of `shardCount` shards of `shardCapacity` bytes each.
    public init(shardCount: Int, shardCapacity: Int) throws(CodingError) {
        guard shardCount >= 1, shardCount <= 65536, shardCapacity >= 0 else {
            throw CodingError(.invalidParameters, "a stripe needs 1...65536 shards and a capacity >= 0")
        }
        let stride = (shardCapacity + 63) & ~63
        let bytes = stride.multipliedReportingOverflow(by: shardCount)
        guard stride >= shardCapacity, !bytes.overflow else {
            throw CodingError(.invalidParameters, "stripe of \(shardCount) x \(shardCapacity) bytes is too large")
        }
        self.shardCount = shardCount
        self.shardCapacity = shardCapacity
        self.stride = stride
        unsafe storage = UnsafeMutableRawPointer.allocate(byteCount: max(bytes.partialValue, 64), alignment: 64)
        unsafe storage.initializeMemory(as: UInt8.self, repeating: 0, count: max(bytes.partialValue, 64))
        unsafe inputPointers = .allocate(capacity: shardCount)
        unsafe inputPointers.initialize(repeating: nil, count: shardCount)
        unsafe outputPointers = .allocate(capacity: shardCount)
        unsafe outputPointers.initialize(repeating: nil, count: shardCount)
    }

    /// A stripe shaped for `code`: k + m shards of `shardCapacity` bytes.
    public convenience init(code: ReedSolomonCode, shardCapacity: Int) throws(CodingError) {
        try self.init(shardCount: code.totalShards, shardCapacity: shardCapacity)
    }

    deinit {
        unsafe storage.deallocate()
        unsafe inputPointers.deallocate()
        unsafe outputPointers.deallocate()
    }

    /// The start of shard `index`.
    func pointer(_ index: Int) -> UnsafeMutablePointer<UInt8> {
        precondition(index >= 0 && index < shardCount, "shard index \(index) outside 0..<\(shardCount)")
        return unsafe (storage + index * stride).assumingMemoryBound(to: UInt8.self)
    }

    /// Calls `body` with shard `index`'s whole capacity, writable.
    public func withUnsafeMutableBytes<R, E: Error>(
        ofShard index: Int, _ body: (UnsafeMutableRawBufferPointer) throws(E) -> R
    ) throws(E) -> R {
        try unsafe body(UnsafeMutableRawBufferPointer(start: pointer(index), count: shardCapacity))
    }

    /// Calls `body` with shard `index`'s whole capacity.
    public func withUnsafeBytes<R, E: Error>(
        ofShard index: Int, _ body: (UnsafeRawBufferPointer) throws(E) -> R
    ) throws(E) -> R {
        try unsafe body(UnsafeRawBufferPointer(start: pointer(index), count: shardCapacity))
    }

    /// Calls `body` with the start of every shard, in order (for handing the stripe to C code).
    public func withUnsafeShardPointers<R, E: Error>(
        _ body: (UnsafeBufferPointer<UnsafeMutablePointer<UInt8>?>) throws(E) -> R
    ) throws(E) -> R {
        for index in 0..<shardCount { unsafe outputPointers[index] = pointer(index) }
        return try unsafe body(UnsafeBufferPointer(start: outputPointers, count: shardCount))
    }

    /// A copy of the first `length` bytes of shard `index` (the whole capacity by default).
    public func bytes(ofShard index: Int, length: Int? = nil) -> [UInt8] {
        let count = length ?? shardCapacity
        precondition(count >= 0 && count <= shardCapacity, "length outside the shard")
        return unsafe Array(UnsafeBufferPointer(start: pointer(index), count: count))
    }

    /// Copies `bytes` to the start of shard `index` and zero-fills the rest of its capacity. An index outside
    /// `0..<shardCount` throws `.invalidParameters`; more bytes than the capacity throw `.shardSizeMismatch`.
    public func setShard(_ index: Int, to bytes: some Collection<UInt8>) throws(CodingError) {
        guard index >= 0 && index < shardCount else {
            throw CodingError(.invalidParameters, "shard index \(index) outside 0..<\(shardCount)")
        }
        guard bytes.count <= shardCapacity else {
            throw CodingError(.shardSizeMismatch, "\(bytes.count) bytes do not fit a \(shardCapacity)-byte shard")
        }
        let start = unsafe pointer(index)
        let copied: Int? = bytes.withContiguousStorageIfAvailable { buffer in
            if let base = buffer.baseAddress { unsafe start.update(from: base, count: buffer.count) }
            return buffer.count
        }
        var offset = copied ?? 0
        if copied == nil {
            for byte in bytes {
                unsafe start[offset] = byte
                offset += 1
            }
        }
        unsafe (start + offset).initialize(repeating: 0, count: shardCapacity - offset)
    }

    /// Zero-fills shard `index`.
    public func clearShard(_ index: Int) {
        unsafe pointer(index).initialize(repeating: 0, count: shardCapacity)
    }
}
