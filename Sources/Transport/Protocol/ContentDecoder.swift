/// A streaming decoder of one content coding with a decoded-size limit (`docs/PROTOCOL.md` section 3.2): feed
/// the coded bytes with `update` as they arrive, then `finish`. As soon as the decoded bytes would pass `limit`
/// it throws `.decodedTooLarge` having produced at most `limit` bytes (a decompression bomb never expands in
/// memory). Bytes that are not a zstd frame (or zlib stream) are `.corruptEncoding`; input that ends mid-frame is
/// `.truncatedEncoding` at `finish`. Not `Sendable`: one request owns one decoder. After an error every call
/// throws again.
package final class ContentDecoder {
    /// The coding.
    package let coding: ContentCoding
    /// The most decoded bytes allowed.
    package let limit: Int64
    /// Decoded bytes produced so far.
    package private(set) var decodedCount: Int64 = 0
    private let decompressor: any StreamDecompressor
    private var ended = false
    private var failure: AetherProtocolError?
    private var sawInput = false

    /// A decoder that allows at most `limit` decoded bytes (0 ... `AetherWire.maximumInteger`).
    package init(_ coding: ContentCoding, limit: Int64) throws(AetherProtocolError) {
        guard (0...AetherWire.maximumInteger).contains(limit) else {
            throw AetherProtocolError(.outOfRange, "the decoded-size limit \(limit) is negative or too large")
        }
        let made: (any StreamDecompressor)? =
            switch coding {
            case .zstd: ZstdDecompressor()
            case .deflate: DeflateDecompressor()
            }
        guard let made else { throw AetherProtocolError(.codingFailed, "the \(coding) decoder could not start") }
        self.coding = coding
        self.limit = limit
        self.decompressor = made
    }

    /// Decodes `bytes`; returns the decoded bytes they completed (possibly none).
    package func update(_ bytes: some Sequence<UInt8>) throws(AetherProtocolError) -> [UInt8] {
        if let failure { throw failure }
        var out: [UInt8] = []
        let budget = Int(min(limit - decodedCount, Int64(Int.max - 1)))
        let step = unsafe ContiguousInput.with(bytes) { buffer in
            if unsafe !buffer.isEmpty { sawInput = true }
            return unsafe decompressor.decompress(buffer, budget: budget, into: &out)
        }
        switch step {
        case .progress(let ended):
            self.ended = ended
            decodedCount += Int64(out.count)
            return out
        case .overBudget:
            return try fail(.decodedTooLarge, "the \(coding) body decodes to more than \(limit) bytes")
        case .corrupt: return try fail(.corruptEncoding, "the body is not valid \(coding)")
        case .failed: return try fail(.codingFailed, "the \(coding) decoder failed")
        }
    }

    /// Checks that the input ended at the end of a frame (or stream).
    package func finish() throws(AetherProtocolError) {
        if let failure { throw failure }
        if !sawInput || !ended { _ = try fail(.truncatedEncoding, "the \(coding) body ends before its frame does") }
    }

    private func fail(_ code: AetherProtocolError.Code, _ message: String) throws(AetherProtocolError) -> [UInt8] {
        let error = AetherProtocolError(code, message)
        failure = error
        throw error
    }

    /// One whole body decoded, at most `limit` bytes.
    package static func decode(
        _ bytes: some Sequence<UInt8>, _ coding: ContentCoding, limit: Int64
    ) throws(AetherProtocolError) -> [UInt8] {
        let decoder = try ContentDecoder(coding, limit: limit)
        let out = try decoder.update(bytes)
        try decoder.finish()
        return out
    }
}
