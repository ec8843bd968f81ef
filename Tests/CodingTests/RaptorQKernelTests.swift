import AetherIO
import Testing

@testable import AetherCoding

/// The pieces the 16 MiB speed work added under the RaptorQ coder: the many-source XOR, the sub-block layouts
/// written straight from and to the caller's bytes, and the huge-page range.
@Suite struct RaptorQKernelTests {
    @Test(arguments: [0, 1, 2, 3, 7, 33], [1, 63, 64, 65, 1280, 1283])
    func xorSumEqualsTheBytewiseXOROfEverySource(sources n: Int, count: Int) {
        let inputs = (0..<n).map { RaptorQTests.randomBytes(count, seed: UInt64(n * 10_000 + count * 10 + $0)) }
        var expected = [UInt8](repeating: 0, count: count)
        for input in inputs {
            for index in 0..<count { expected[index] ^= input[index] }
        }
        // The output starts as garbage: xorSum must overwrite every byte, never XOR into what was there.
        var out = [UInt8](repeating: 0xA5, count: count)
        let pointers = UnsafeMutablePointer<UnsafePointer<UInt8>>.allocate(capacity: max(n, 1))
        let storage = unsafe inputs.map { input in
            let copy = UnsafeMutablePointer<UInt8>.allocate(capacity: count)
            unsafe copy.initialize(from: input, count: count)
            return unsafe copy
        }
        defer {
            unsafe pointers.deallocate()
            for index in 0..<n { unsafe storage[index].deallocate() }
        }
        for index in 0..<n { unsafe pointers[index] = UnsafePointer(storage[index]) }
        unsafe out.withUnsafeMutableBufferPointer { buffer in
            guard let base = buffer.baseAddress else { return }
            unsafe RaptorQArithmetic.xorSum(base, UnsafePointer(pointers), n, count: count)
        }
        #expect(out == expected)
    }

    @Test func aRepeatedSourceCancels() {
        let a = RaptorQTests.randomBytes(1280, seed: 1)
        let b = RaptorQTests.randomBytes(1280, seed: 2)
        var out = [UInt8](repeating: 0, count: 1280)
        unsafe a.withUnsafeBufferPointer { first in
            unsafe b.withUnsafeBufferPointer { second in
                guard let x = first.baseAddress, let y = second.baseAddress else { return }
                let sources = unsafe [x, y, x]
                unsafe sources.withUnsafeBufferPointer { list in
                    guard let base = list.baseAddress else { return }
                    unsafe out.withUnsafeMutableBufferPointer { target in
                        guard let to = target.baseAddress else { return }
                        unsafe RaptorQArithmetic.xorSum(to, base, 3, count: 1280)
                    }
                }
            }
        }
        #expect(out == b)
    }

    /// Sub-symbol i of sub-block j of a block of K symbols is at (sub-block j's start + i * its size) in the
    /// block and at (i * T + the sizes before j) in the symbols; bytes past the block's end are zero padding.
    @Test(arguments: [0, 1, 500, 1439, 1440])
    func subBlocksLayOutAShortBlockWithZeroPaddingAndBack(length: Int) {
        let sizes = [24, 24, 16, 16, 16]
        let t = 96
        let k = 15
        let block = RaptorQTests.randomBytes(length, seed: UInt64(length))
        var padded = block + [UInt8](repeating: 0, count: k * t - length)
        let symbols = unsafe block.withUnsafeBufferPointer { bytes in
            unsafe RaptorQSubBlocks.interleave(bytes, sourceSymbols: k, subSymbolSizes: sizes)
        }
        #expect(symbols.count == k * t)
        var blockOffset = 0
        var symbolOffset = 0
        for size in sizes {
            for i in 0..<k {
                let fromBlock = Array(padded[blockOffset + i * size..<blockOffset + i * size + size])
                #expect(Array(symbols[i * t + symbolOffset..<i * t + symbolOffset + size]) == fromBlock)
            }
            blockOffset += k * size
            symbolOffset += size
        }
        #expect(RaptorQSubBlocks.deinterleave(symbols, sourceSymbols: k, subSymbolSizes: sizes) == padded)
        // Written straight into a larger buffer, only the first `length` bytes change.
        var out = [UInt8](repeating: 0xEE, count: k * t + 8)
        unsafe symbols.withUnsafeBufferPointer { buffer in
            unsafe out.withUnsafeMutableBufferPointer { target in
                guard let base = target.baseAddress else { return }
                unsafe RaptorQSubBlocks.deinterleave(
                    buffer, sourceSymbols: k, subSymbolSizes: sizes, into: base, limit: length)
            }
        }
        #expect(Array(out[0..<length]) == block)
        #expect(out[length...].allSatisfy { $0 == 0xEE })
        padded.removeAll()
    }

    @Test func hugePagesAreAskedForOnlyForWholeAlignedPagesInsideTheBuffer() {
        let size = HugePages.size
        #expect(HugePages.alignedRange(address: 4096, count: 2 * size - 1) == nil)
        #expect(HugePages.alignedRange(address: 4096, count: 2 * size) == size..<2 * size)
        #expect(HugePages.alignedRange(address: size, count: 2 * size) == size..<3 * size)
        #expect(HugePages.alignedRange(address: size + 1, count: 3 * size) == 2 * size..<4 * size)
        for address in stride(from: 0, to: 3 * size, by: 123_457) {
            for count in [2 * size, 5 * size / 2, 17 << 20] {
                guard let range = HugePages.alignedRange(address: address, count: count) else { continue }
                #expect(range.lowerBound >= address && range.upperBound <= address + count)
                #expect(range.lowerBound % size == 0 && range.upperBound % size == 0)
            }
        }
        // A real buffer: the advice leaves its bytes as they were written.
        let count = 5 << 20
        let buffer = UnsafeMutableRawPointer.allocate(byteCount: count, alignment: 64)
        defer { unsafe buffer.deallocate() }
        let advised = unsafe HugePages.advise(buffer, count: count)
        #expect(advised != nil)
        unsafe buffer.initializeMemory(as: UInt8.self, repeating: 7, count: count)
        #expect(unsafe buffer.load(fromByteOffset: count - 1, as: UInt8.self) == 7)
    }
}
