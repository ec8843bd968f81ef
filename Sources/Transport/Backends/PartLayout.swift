/// The re-blocking of an object into parts a backend accepts: every part but the last has `partSize`
/// bytes, the last has the rest. Built from the size the scheduler wants and the backend's capabilities.
public struct PartLayout: Sendable, Hashable {
    /// The size of every part but the last.
    public let partSize: Int64
    /// The object size.
    public let objectSize: Int64
    /// The number of parts (1 for an empty object: one empty part).
    public var partCount: Int { objectSize == 0 ? 1 : Int((objectSize + partSize - 1) / partSize) }

    /// The part size nearest to `preferred` that satisfies `capabilities` for `objectSize`: at least the
    /// minimum, at most the maximum, few enough parts (grown when there would be too many), a multiple of
    /// `alignment` (16 KiB by default) unless the maximum forbids it. Throws when no size fits.
    public init(
        objectSize: Int64, preferred: Int64, capabilities: BackendCapabilities, alignment: Int64 = 16 * 1024
    ) throws(TransportError) {
        guard objectSize >= 0, objectSize <= capabilities.maximumObjectSize else {
            throw TransportError(
                .invalidArgument,
                "an object of \(objectSize) bytes is larger than the backend's \(capabilities.maximumObjectSize)")
        }
        guard preferred > 0, alignment > 0, capabilities.maximumParts > 0,
            capabilities.minimumPartSize <= capabilities.maximumPartSize, capabilities.maximumPartSize > 0
        else { throw TransportError(.invalidArgument, "part size \(preferred) or the backend's limits are invalid") }
        var size = max(preferred, capabilities.minimumPartSize)
        let fewestSize = (objectSize + Int64(capabilities.maximumParts) - 1) / Int64(capabilities.maximumParts)
        size = max(size, fewestSize)
        let aligned = (size + alignment - 1) / alignment * alignment
        if aligned <= capabilities.maximumPartSize { size = aligned }
        size = min(size, capabilities.maximumPartSize)
        guard size >= capabilities.minimumPartSize, size > 0,
            objectSize == 0 || (objectSize + size - 1) / size <= Int64(capabilities.maximumParts)
        else {
            throw TransportError(
                .invalidArgument, "no part size fits \(objectSize) bytes within the backend's part limits")
        }
        self.partSize = size
        self.objectSize = objectSize
    }

    /// The byte range of part `index` (0-based).
    public func range(ofPart index: Int) -> Range<Int64> {
        let start = Int64(index) * partSize
        return start..<min(start + partSize, objectSize)
    }
}
