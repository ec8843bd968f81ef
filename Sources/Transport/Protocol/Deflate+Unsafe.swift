internal import CAetherZlib

/// zlib streams (RFC 1950, the RFC 9110 `deflate` coding) for AetherTransport's content coders. AetherIO has its
/// own zlib file for CRC-32 and its probe; each module keeps its C calls in its own `+Unsafe` file.
private let zlibScratchSize = 64 << 10
/// zlib takes at most `uInt` bytes per call; larger inputs go in slices of this size.
private let zlibSliceSize = 1 << 30

/// deflate over one `z_stream`. Not `Sendable`: one encoder owns it.
@safe final class DeflateCompressor: StreamCompressor {
    private var stream = unsafe z_stream()
    private let scratch: UnsafeMutableRawBufferPointer

    /// deflateInit_ at `level` (zlib format, 32 KiB window); nil when zlib fails.
    init?(level: Int32) {
        unsafe scratch = UnsafeMutableRawBufferPointer.allocate(byteCount: zlibScratchSize, alignment: 16)
        guard unsafe deflateInit_(&stream, level, ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size)) == Z_OK else {
            unsafe scratch.deallocate()
            return nil
        }
    }

    /// deflate(Z_NO_FLUSH), or deflate(Z_FINISH) when finishing, until the input is taken and, when finishing,
    /// the stream ended.
    func compress(_ input: UnsafeRawBufferPointer, finish: Bool, into out: inout [UInt8]) -> Bool {
        var offset = 0
        repeat {
            let slice = min(input.count - offset, zlibSliceSize)
            let last = offset + slice == input.count
            if let base = input.baseAddress {
                unsafe stream.next_in = UnsafeMutablePointer(
                    mutating: (base + offset).assumingMemoryBound(to: Bytef.self))
            } else {
                unsafe stream.next_in = nil
            }
            unsafe stream.avail_in = uInt(slice)
            let flush = finish && last ? Z_FINISH : Z_NO_FLUSH
            while true {
                unsafe stream.next_out = scratch.baseAddress?.assumingMemoryBound(to: Bytef.self)
                unsafe stream.avail_out = uInt(scratch.count)
                let rc = unsafe deflate(&stream, flush)
                guard rc == Z_OK || rc == Z_STREAM_END || rc == Z_BUF_ERROR else { return false }
                let produced = unsafe scratch.count - Int(stream.avail_out)
                unsafe out.append(contentsOf: UnsafeRawBufferPointer(rebasing: scratch[0..<produced]))
                if flush == Z_FINISH {
                    if rc == Z_STREAM_END { break }
                } else if unsafe stream.avail_in == 0, unsafe produced < scratch.count {
                    break
                }
            }
            offset += slice
        } while offset < input.count
        return true
    }

    /// deflateEnd
    deinit {
        _ = unsafe deflateEnd(&stream)
        unsafe scratch.deallocate()
    }
}

/// inflate over one `z_stream`. Not `Sendable`: one decoder owns it.
@safe final class DeflateDecompressor: StreamDecompressor {
    private var stream = unsafe z_stream()
    private let scratch: UnsafeMutableRawBufferPointer
    private var ended = false

    /// inflateInit_ (zlib format); nil when zlib fails.
    init?() {
        unsafe scratch = UnsafeMutableRawBufferPointer.allocate(byteCount: zlibScratchSize, alignment: 16)
        guard unsafe inflateInit_(&stream, ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size)) == Z_OK else {
            unsafe scratch.deallocate()
            return nil
        }
    }

    /// inflate(Z_NO_FLUSH) until the input is consumed and the output drained, never asking for more than
    /// `budget + 1` bytes in all. Bytes after the end of the stream are corrupt (a zlib stream is one stream).
    func decompress(_ input: UnsafeRawBufferPointer, budget: Int, into out: inout [UInt8]) -> DecompressStep {
        var left = budget
        var offset = 0
        repeat {
            let slice = min(input.count - offset, zlibSliceSize)
            if ended, slice > 0 { return .corrupt }
            if let base = input.baseAddress {
                unsafe stream.next_in = UnsafeMutablePointer(
                    mutating: (base + offset).assumingMemoryBound(to: Bytef.self))
            } else {
                unsafe stream.next_in = nil
            }
            unsafe stream.avail_in = uInt(slice)
            while true {
                let room = unsafe min(scratch.count, left + 1)
                unsafe stream.next_out = scratch.baseAddress?.assumingMemoryBound(to: Bytef.self)
                unsafe stream.avail_out = uInt(room)
                let rc = unsafe inflate(&stream, Z_NO_FLUSH)
                switch rc {
                case Z_OK, Z_BUF_ERROR: break
                case Z_STREAM_END: ended = true
                case Z_MEM_ERROR: return .failed
                default: return .corrupt
                }
                let produced = unsafe room - Int(stream.avail_out)
                if produced > left { return .overBudget }
                left -= produced
                unsafe out.append(contentsOf: UnsafeRawBufferPointer(rebasing: scratch[0..<produced]))
                if ended {
                    if unsafe stream.avail_in > 0 { return .corrupt }
                    break
                }
                if unsafe stream.avail_in == 0, produced < room { break }
                if rc == Z_BUF_ERROR, produced == 0 { break }
            }
            offset += slice
        } while offset < input.count
        return .progress(ended: ended)
    }

    /// inflateEnd
    deinit {
        _ = unsafe inflateEnd(&stream)
        unsafe scratch.deallocate()
    }
}
