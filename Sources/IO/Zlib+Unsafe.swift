internal import CAetherZlib

/// Every call into zlib made by AetherIO: CRC-32 (`crc32_z`) and the deflate level-1 compressibility probe
/// (the Linux stand-in for the spec's LZFSE probe).
enum Zlib {
    /// crc32_z: continues the CRC-32 (ISO-HDLC) `crc` over `bytes`; zlib takes and returns the final form.
    static func crc32(_ crc: UInt32, _ bytes: UnsafeRawBufferPointer) -> UInt32 {
        guard let base = bytes.baseAddress, unsafe !bytes.isEmpty else { return crc }
        return unsafe UInt32(
            truncatingIfNeeded: crc32_z(uLong(crc), base.assumingMemoryBound(to: Bytef.self), bytes.count))
    }
}

/// The compressibility probe's deflate stream. Not `Sendable`: one hasher owns one.
@safe final class DeflateProbe {
    private var stream = unsafe z_stream()
    private var output: UnsafeMutableRawBufferPointer
    private let ready: Bool

    /// deflateInit_ at level 1, once: its ~256 KiB of state is reused by every sample.
    init(maximumInput: Int) {
        let bound = Int(compressBound(uLong(maximumInput)))
        unsafe output = UnsafeMutableRawBufferPointer.allocate(byteCount: bound, alignment: 16)
        let size = unsafe Int32(MemoryLayout<z_stream>.size)
        ready = unsafe deflateInit_(&stream, 1, ZLIB_VERSION, size) == Z_OK
    }

    /// deflateReset + deflate(Z_FINISH): the compressed size of `sample`, or nil when zlib failed
    /// (the probe is advisory; a failure means "no estimate", never a wrong digest).
    func compressedSize(_ sample: UnsafeRawBufferPointer) -> Int? {
        guard ready, let base = sample.baseAddress, unsafe sample.count <= output.count else { return nil }
        guard unsafe deflateReset(&stream) == Z_OK else { return nil }
        unsafe stream.next_in = UnsafeMutablePointer(mutating: base.assumingMemoryBound(to: Bytef.self))
        unsafe stream.avail_in = uInt(sample.count)
        unsafe stream.next_out = output.baseAddress!.assumingMemoryBound(to: Bytef.self)
        unsafe stream.avail_out = uInt(output.count)
        let rc = unsafe deflate(&stream, Z_FINISH)
        guard rc == Z_STREAM_END else { return nil }
        return unsafe Int(stream.total_out)
    }

    /// deflateEnd
    deinit {
        if ready { _ = unsafe deflateEnd(&stream) }
        unsafe output.deallocate()
    }
}
