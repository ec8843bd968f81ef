/// A streaming encoder of one content coding (`docs/PROTOCOL.md` section 3.2): feed bytes with `update`, end
/// with `finish`; the concatenated outputs are one zstd frame or one zlib stream. Not `Sendable`: one request
/// owns one encoder.
package final class ContentEncoder {
    /// The coding.
    package let coding: ContentCoding
    private let compressor: any StreamCompressor
    private var finished = false

    /// The level used when none is given: zstd 3 (its default), deflate 6 (zlib's default).
    package static func defaultLevel(_ coding: ContentCoding) -> Int {
        switch coding {
        case .zstd: 3
        case .deflate: 6
        }
    }

    /// An encoder at `level` (zstd 1 ... 19, deflate 1 ... 9; nil: the default).
    package init(_ coding: ContentCoding, level: Int? = nil) throws(AetherProtocolError) {
        let level = level ?? Self.defaultLevel(coding)
        let range = coding == .zstd ? 1...19 : 1...9
        guard range.contains(level) else {
            throw AetherProtocolError(.outOfRange, "\(coding) level \(level) is outside \(range)")
        }
        let made: (any StreamCompressor)? =
            switch coding {
            case .zstd: ZstdCompressor(level: Int32(level))
            case .deflate: DeflateCompressor(level: Int32(level))
            }
        guard let made else { throw AetherProtocolError(.codingFailed, "the \(coding) encoder could not start") }
        self.coding = coding
        self.compressor = made
    }

    /// Encodes `bytes`; returns what the coder produced so far (possibly nothing).
    package func update(_ bytes: some Sequence<UInt8>) throws(AetherProtocolError) -> [UInt8] {
        try step(bytes, finish: false)
    }

    /// Ends the frame or stream; returns the rest of the output. The encoder cannot be used afterwards.
    package func finish() throws(AetherProtocolError) -> [UInt8] {
        try step([UInt8](), finish: true)
    }

    private func step(_ bytes: some Sequence<UInt8>, finish: Bool) throws(AetherProtocolError) -> [UInt8] {
        guard !finished else { throw AetherProtocolError(.codingFailed, "the \(coding) encoder already finished") }
        var out: [UInt8] = []
        let ok = unsafe ContiguousInput.with(bytes) { unsafe compressor.compress($0, finish: finish, into: &out) }
        guard ok else {
            finished = true
            throw AetherProtocolError(.codingFailed, "the \(coding) encoder failed")
        }
        if finish { finished = true }
        return out
    }

    /// One whole body encoded.
    package static func encode(
        _ bytes: some Sequence<UInt8>, _ coding: ContentCoding, level: Int? = nil
    ) throws(AetherProtocolError) -> [UInt8] {
        let encoder = try ContentEncoder(coding, level: level)
        return try encoder.update(bytes) + encoder.finish()
    }
}

/// Hands any byte sequence to a raw-buffer consumer: in place when its storage is contiguous (arrays, slices,
/// raw buffers), through one temporary array otherwise.
enum ContiguousInput {
    static func with<R>(_ bytes: some Sequence<UInt8>, _ body: (UnsafeRawBufferPointer) -> R) -> R {
        if let result = bytes.withContiguousStorageIfAvailable({ unsafe body(UnsafeRawBufferPointer($0)) }) {
            return result
        }
        return unsafe Array(bytes).withUnsafeBytes { unsafe body($0) }
    }
}
