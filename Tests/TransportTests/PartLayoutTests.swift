import AetherTransport
import Testing

@Suite struct PartLayoutTests {
    static let s3 = BackendCapabilities(
        minimumPartSize: 5 << 20, maximumPartSize: 5 << 30, maximumParts: 10_000, equalParts: false,
        parallelParts: true, outOfOrderParts: true, checksums: [.crc32c], resumeQuery: .parts,
        maximumObjectSize: 5 << 40)

    @Test func aSmallPreferredSizeIsRaisedToTheMinimum() throws {
        let layout = try PartLayout(objectSize: 100 << 20, preferred: 1 << 20, capabilities: Self.s3)
        #expect(layout.partSize == 5 << 20)
        #expect(layout.partCount == 20)
        #expect(layout.range(ofPart: 19) == Int64(95 << 20)..<Int64(100 << 20))
    }

    @Test func tooManyPartsGrowThePartSizeToAnAlignedSizeWithinTheLimit() throws {
        let size: Int64 = 100 << 30
        let layout = try PartLayout(objectSize: size, preferred: 8 << 20, capabilities: Self.s3)
        #expect(layout.partCount <= 10_000)
        #expect(layout.partSize % (16 * 1024) == 0)
        #expect(layout.partSize >= (size + 9_999) / 10_000)
    }

    @Test func theLastPartHoldsTheRemainderAndAnEmptyObjectHasOneEmptyPart() throws {
        let layout = try PartLayout(objectSize: (5 << 20) + 1, preferred: 5 << 20, capabilities: Self.s3)
        #expect(layout.partCount == 2)
        #expect(layout.range(ofPart: 1) == Int64(5 << 20)..<Int64((5 << 20) + 1))
        let empty = try PartLayout(objectSize: 0, preferred: 5 << 20, capabilities: Self.s3)
        #expect(empty.partCount == 1)
        #expect(empty.range(ofPart: 0).isEmpty)
    }

    @Test func anObjectNoPartSizeCanCarryIsATypedError() {
        var tight = Self.s3
        tight.maximumParts = 2
        tight.maximumPartSize = 6 << 20
        #expect(throws: TransportError.self) {
            try PartLayout(objectSize: 20 << 20, preferred: 5 << 20, capabilities: tight)
        }
        #expect(throws: TransportError.self) {
            try PartLayout(objectSize: 6 << 40, preferred: 5 << 20, capabilities: Self.s3)
        }
    }
}
