import Testing

@testable import AetherIO

#if canImport(Glibc)
    import Glibc
#endif

@Suite struct FileChunkReaderTests {
    static let chunk = 64 << 10
    // Sizes around the chunk edges, plus one spanning several chunks with a ragged tail.
    static let sizes = [0, 1, chunk - 1, chunk, chunk + 1, 5 * chunk + 12_345]

    @Test(arguments: sizes) func allThreeStrategiesReadTheSameBytes(size: Int) throws {
        let files = try TemporaryFiles()
        defer { files.remove() }
        let content = TemporaryFiles.randomBytes(size)
        let path = try files.write("f", content)
        var results: [[UInt8]] = []
        for strategy in ReadStrategy.allCases {
            let reader = try FileChunkReader(
                path: path, options: ChunkReadOptions(chunkSize: Self.chunk, strategy: strategy))
            #expect(reader.strategy == strategy)
            let (bytes, layout) = try readAll(reader)
            #expect(bytes == content, "strategy \(strategy)")
            #expect(layout.count == (size + Self.chunk - 1) / Self.chunk)
            for (index, (offset, count)) in layout.enumerated() {
                #expect(offset == Int64(index * Self.chunk))
                #expect(count == min(Self.chunk, size - index * Self.chunk))
            }
            results.append(bytes)
        }
        #expect(results.allSatisfy { $0 == results[0] })
    }

    @Test(arguments: ReadStrategy.allCases) func aByteRangeStartingMidPageIsReadExactly(strategy: ReadStrategy) throws {
        let files = try TemporaryFiles()
        defer { files.remove() }
        let content = TemporaryFiles.randomBytes(300_000)
        let path = try files.write("f", content)
        let range: Range<Int64> = 4_097..<250_001
        let reader = try FileChunkReader(
            path: path, options: ChunkReadOptions(chunkSize: 50_000, range: range, strategy: strategy))
        let (bytes, layout) = try readAll(reader)
        #expect(bytes == Array(content[4_097..<250_001]))
        #expect(layout.first?.0 == 4_097)
        #expect(layout.count == 5)
    }

    @Test func aRangePastTheEndIsAnInvalidArgument() throws {
        let files = try TemporaryFiles()
        defer { files.remove() }
        let path = try files.write("f", TemporaryFiles.randomBytes(100))
        let error = #expect(throws: IOError.self) {
            try FileChunkReader(path: path, options: ChunkReadOptions(range: 0..<101))
        }
        #expect(error?.code == .invalidArgument)
    }

    @Test(arguments: [0, -1]) func aChunkSizeOutsideItsRangeIsAnInvalidArgument(size: Int) throws {
        let files = try TemporaryFiles()
        defer { files.remove() }
        let path = try files.write("f", [1, 2, 3])
        let error = #expect(throws: IOError.self) {
            try FileChunkReader(path: path, options: ChunkReadOptions(chunkSize: size))
        }
        #expect(error?.code == .invalidArgument)
    }

    @Test(arguments: [EPERM, ENOSYS]) func aRefusedIOUringFallsBackToPread(refusal: Int32) throws {
        let files = try TemporaryFiles()
        defer { files.remove() }
        let content = TemporaryFiles.randomBytes(3 << 20)
        let path = try files.write("f", content)
        for requested in [ReadStrategy.ioUring, nil] {
            var options = ChunkReadOptions(chunkSize: 1 << 20, strategy: requested)
            options.simulatedIOUringRefusal = refusal
            let reader = try FileChunkReader(path: path, options: options)
            #expect(reader.strategy == .pread)
            #expect(reader.ioUringRefusal?.code == .ioUringUnavailable)
            #expect(reader.ioUringRefusal?.errno == refusal)
            #expect(try readAll(reader).bytes == content)
        }
    }

    @Test func ioUringIsUsedWhenTheKernelAllowsIt() throws {
        // The kernel is asked independently of the reader; the reader must agree with it either way.
        let sysctl = KernelIOUringProbe.disabledSysctl()
        let setupErrno = KernelIOUringProbe.setupErrno()
        if sysctl == 2 { #expect(setupErrno == EPERM, "io_uring_disabled = 2 refuses every process") }
        let files = try TemporaryFiles()
        defer { files.remove() }
        let content = TemporaryFiles.randomBytes(2 << 20)
        let path = try files.write("f", content)
        // 2 MiB in 256 KiB chunks: the decision wants io_uring wherever it is available.
        #expect(ReadStrategy.decide(length: 2 << 20, chunkSize: 256 << 10, ioUringAvailable: true) == .ioUring)
        let reader = try FileChunkReader(path: path, options: ChunkReadOptions(chunkSize: 256 << 10))
        if setupErrno == 0 {
            #expect(reader.strategy == .ioUring)
            #expect(reader.ioUringRefusal == nil)
        } else {
            // Refused (a container's seccomp, the sysctl, a memlock limit): pread, and the refusal says why.
            #expect(reader.strategy == .pread)
            #expect(reader.ioUringRefusal?.code == .ioUringUnavailable)
            #expect(reader.ioUringRefusal?.errno == setupErrno)
        }
        #expect(try readAll(reader).0 == content)
    }

    @Test func theDecisionFollowsSizeChunkSizeAndPlatformSupport() {
        #expect(ReadStrategy.decide(length: 1000, chunkSize: 4 << 20, ioUringAvailable: true) == .pread)
        #expect(ReadStrategy.decide(length: (1 << 20) - 1, chunkSize: 4 << 20, ioUringAvailable: true) == .pread)
        #expect(ReadStrategy.decide(length: 1 << 30, chunkSize: 4 << 10, ioUringAvailable: true) == .pread)
        #expect(ReadStrategy.decide(length: 1 << 30, chunkSize: 4 << 20, ioUringAvailable: true) == .ioUring)
        #expect(ReadStrategy.decide(length: 1 << 20, chunkSize: 64 << 10, ioUringAvailable: true) == .ioUring)
        #expect(ReadStrategy.decide(length: 1 << 30, chunkSize: 4 << 20, ioUringAvailable: false) == .pread)
    }

    @Test(arguments: [ReadStrategy.pread, .ioUring]) func buffersAreReusedNotAllocatedPerChunk(strategy: ReadStrategy)
        throws
    {
        let files = try TemporaryFiles()
        defer { files.remove() }
        let path = try files.write("f", TemporaryFiles.randomBytes(64 * 4096))
        let reader = try FileChunkReader(
            path: path, options: ChunkReadOptions(chunkSize: 4096, strategy: strategy, prefetchChunks: 3))
        var count = 0
        while let chunk = try reader.next() {
            _ = chunk.count
            count += 1
        }
        #expect(count == 64)
        // Prefetch 3 + the one being read + one the consumer holds: far fewer than 64 allocations.
        #expect(reader.bufferAllocations <= 3 + 2 + 1)
    }

    @Test func aConsumerHoldingManyChunksGetsFreshBuffersInsteadOfADeadlock() throws {
        let files = try TemporaryFiles()
        defer { files.remove() }
        let content = TemporaryFiles.randomBytes(20 * 4096)
        let path = try files.write("f", content)
        let reader = try FileChunkReader(
            path: path, options: ChunkReadOptions(chunkSize: 4096, strategy: .ioUring, heldChunks: 1))
        var held: [Chunk] = []
        while let chunk = try reader.next() { held.append(chunk) }
        #expect(held.flatMap(\.bytes) == content)
    }

    @Test func afterAnErrorEveryCallThrowsIt() throws {
        let files = try TemporaryFiles()
        defer { files.remove() }
        let path = try files.write("f", TemporaryFiles.randomBytes(10 * 4096))
        let reader = try FileChunkReader(path: path, options: ChunkReadOptions(chunkSize: 4096, strategy: .pread))
        _ = try reader.next()
        try files.truncate(path, to: 4096)
        #expect(throws: IOError.self) { try reader.next() }
        let again = #expect(throws: IOError.self) { try reader.next() }
        #expect(again?.code == .fileChanged)
    }
}
