internal import CAetherZstd

/// The outcome of one decompression step.
enum DecompressStep: Equatable {
    /// Input consumed; `ended` says whether the last frame or stream is complete.
    case progress(ended: Bool)
    /// The output passed its budget (more than `budget` bytes were appended; the caller stops).
    case overBudget
    /// The input is not a valid frame or stream.
    case corrupt
    /// The library failed for another reason (memory).
    case failed
}

/// A streaming compressor of one content coding.
protocol StreamCompressor: AnyObject {
    /// Compresses `input`, appending output to `out`; `finish` ends the frame. False when the library failed.
    func compress(_ input: UnsafeRawBufferPointer, finish: Bool, into out: inout [UInt8]) -> Bool
}

/// A streaming decompressor of one content coding.
protocol StreamDecompressor: AnyObject {
    /// Decodes all of `input`, appending to `out`, and stops as soon as `out` grew by more than `budget` bytes.
    func decompress(_ input: UnsafeRawBufferPointer, budget: Int, into out: inout [UInt8]) -> DecompressStep
}

/// The scratch buffer size of both libzstd directions (ZSTD_CStreamOutSize and ZSTD_DStreamOutSize are both
/// one block, 128 KiB + a little).
private let zstdScratchSize = 128 << 10

/// ZSTD_compressStream2 over one `ZSTD_CCtx`. Not `Sendable`: one encoder owns it.
@safe final class ZstdCompressor: StreamCompressor {
    private let context: OpaquePointer
    private let scratch: UnsafeMutableRawBufferPointer

    /// ZSTD_createCCtx, then ZSTD_CCtx_setParameter(ZSTD_c_compressionLevel, level); nil when either fails.
    init?(level: Int32) {
        guard let context = unsafe ZSTD_createCCtx() else { return nil }
        guard unsafe ZSTD_isError(ZSTD_CCtx_setParameter(context, ZSTD_c_compressionLevel, level)) == 0 else {
            _ = unsafe ZSTD_freeCCtx(context)
            return nil
        }
        unsafe self.context = context
        unsafe scratch = UnsafeMutableRawBufferPointer.allocate(byteCount: zstdScratchSize, alignment: 16)
    }

    /// ZSTD_compressStream2 with ZSTD_e_continue (or ZSTD_e_end when finishing) until the input is taken (and,
    /// when finishing, the frame is flushed).
    func compress(_ input: UnsafeRawBufferPointer, finish: Bool, into out: inout [UInt8]) -> Bool {
        var inBuffer = unsafe ZSTD_inBuffer(src: input.baseAddress, size: input.count, pos: 0)
        while true {
            var outBuffer = unsafe ZSTD_outBuffer(dst: scratch.baseAddress, size: scratch.count, pos: 0)
            let remaining = unsafe ZSTD_compressStream2(
                context, &outBuffer, &inBuffer, finish ? ZSTD_e_end : ZSTD_e_continue)
            guard ZSTD_isError(remaining) == 0 else { return false }
            unsafe out.append(contentsOf: UnsafeRawBufferPointer(rebasing: scratch[0..<outBuffer.pos]))
            if finish {
                if remaining == 0 { return true }
            } else if unsafe inBuffer.pos == inBuffer.size {
                return true
            }
        }
    }

    /// ZSTD_freeCCtx
    deinit {
        _ = unsafe ZSTD_freeCCtx(context)
        unsafe scratch.deallocate()
    }
}

/// ZSTD_decompressStream over one `ZSTD_DCtx`. Not `Sendable`: one decoder owns it.
@safe final class ZstdDecompressor: StreamDecompressor {
    private let context: OpaquePointer
    private let scratch: UnsafeMutableRawBufferPointer
    private var frameEnded = false

    /// The largest window accepted (2^27 = 128 MiB, libzstd's default limit), so a frame cannot make the decoder
    /// allocate more.
    static let windowLogMax: Int32 = 27

    /// ZSTD_createDCtx, then ZSTD_DCtx_setParameter(ZSTD_d_windowLogMax); nil when either fails.
    init?() {
        guard let context = unsafe ZSTD_createDCtx() else { return nil }
        guard unsafe ZSTD_isError(ZSTD_DCtx_setParameter(context, ZSTD_d_windowLogMax, Self.windowLogMax)) == 0
        else {
            _ = unsafe ZSTD_freeDCtx(context)
            return nil
        }
        unsafe self.context = context
        unsafe scratch = UnsafeMutableRawBufferPointer.allocate(byteCount: zstdScratchSize, alignment: 16)
    }

    /// ZSTD_decompressStream until the input is consumed and the output drained, never asking for more than
    /// `budget + 1` bytes in all, so a bomb stops within one byte of its budget.
    func decompress(_ input: UnsafeRawBufferPointer, budget: Int, into out: inout [UInt8]) -> DecompressStep {
        var inBuffer = unsafe ZSTD_inBuffer(src: input.baseAddress, size: input.count, pos: 0)
        var left = budget
        while true {
            let room = unsafe min(scratch.count, left + 1)
            var outBuffer = unsafe ZSTD_outBuffer(dst: scratch.baseAddress, size: room, pos: 0)
            let before = unsafe inBuffer.pos
            let hint = unsafe ZSTD_decompressStream(context, &outBuffer, &inBuffer)
            guard ZSTD_isError(hint) == 0 else { return .corrupt }
            let produced = unsafe outBuffer.pos
            if produced > left { return .overBudget }
            left -= produced
            unsafe out.append(contentsOf: UnsafeRawBufferPointer(rebasing: scratch[0..<produced]))
            let consumed = unsafe inBuffer.pos > before
            if hint == 0 {
                frameEnded = true
            } else if produced > 0 || consumed {
                frameEnded = false
            }
            let drained = produced < room
            if unsafe inBuffer.pos == inBuffer.size, drained { return .progress(ended: frameEnded) }
        }
    }

    /// ZSTD_freeDCtx
    deinit {
        _ = unsafe ZSTD_freeDCtx(context)
        unsafe scratch.deallocate()
    }
}
