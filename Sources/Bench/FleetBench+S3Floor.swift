import AetherIO
import AetherTestSupport
import AetherTransport
import Foundation
import Synchronization

extension FleetBench {
    /// What the fleet's S3 side costs with no receiver at all, on the same RGW in the same run: the object's bytes
    /// written once as pieces of S3's part floor (`PutObject`, 8 at a time, as the receivers write chunks) and then
    /// composed into one object by server-side copies (`UploadPartCopy`, 16 at a time, as `S3BlobStore` completes).
    /// A fleet upload cannot be faster than this on this machine, so `embedded / (put + compose)` bounds its ratio.
    struct S3Floor {
        var put: Double
        var compose: Double
        /// CPU seconds of radosgw and ceph-osd during both.
        var storeCPU: Double
    }

    static func s3Floor(rgw: RGWProcess, bucket: String, size: Int) async throws -> S3Floor {
        let http = try HTTPClient(configuration: HTTPClientConfiguration(proxy: .none))
        defer { http.shutDown() }
        let client = try E2ETools.objectClient(rgw: rgw, bucket: bucket, http: http)
        let pieceSize = 5 << 20
        let count = max(1, (size + pieceSize - 1) / pieceSize)
        let folder = "floor-\(getpid())-\(Int(Measure.now() * 1000))"
        // One random piece for all: RGW stores each PutObject's bytes whole (it does not dedup).
        var generator = SystemRandomNumberGenerator()
        let piece = (0..<pieceSize).map { _ in UInt8.random(in: 0...255, using: &generator) }
        let keys = (0..<count).map { "\(folder)/pieces/\($0)" }
        func storeCPU() -> Double {
            ["rgw", "osd"].compactMap { rgw.processIDs[$0] }.compactMap { ProcessCPU.seconds(processID: $0) }
                .reduce(0, +)
        }
        let cpuBefore = storeCPU()
        let putStart = Measure.now()
        try await inFlight(count, limit: 8) { index in
            let last = size - index * pieceSize
            _ = try await client.putObject(keys[index], bytes: last < pieceSize ? Array(piece[0..<last]) : piece)
        }
        let put = Measure.now() - putStart
        let composeStart = Measure.now()
        let target = "\(folder)/object"
        let uploadID = try await client.createMultipartUpload(target)
        let tags = Mutex<[Int: String]>([:])
        try await inFlight(count, limit: 16) { index in
            let tag = try await client.uploadPartCopy(
                target, uploadID: uploadID, number: index + 1, source: keys[index])
            tags.withLock { $0[index] = tag }
        }
        let parts = tags.withLock { tags in
            (0..<count).map { S3ObjectClient.CompletedPart(number: $0 + 1, entityTag: tags[$0] ?? "") }
        }
        try await client.completeMultipartUpload(target, uploadID: uploadID, parts: parts)
        let compose = Measure.now() - composeStart
        let cpu = storeCPU() - cpuBefore
        try await inFlight(count + 1, limit: 8) { index in
            try await client.deleteObject(index < count ? keys[index] : target)
        }
        return S3Floor(put: put, compose: compose, storeCPU: cpu)
    }

    /// Runs `body` for `0..<count`, at most `limit` at once.
    private static func inFlight(
        _ count: Int, limit: Int, _ body: @escaping @Sendable (Int) async throws -> Void
    ) async throws {
        try await withThrowingTaskGroup(of: Void.self) { group in
            var next = 0
            while next < min(count, limit) {
                let index = next
                group.addTask { try await body(index) }
                next += 1
            }
            while try await group.next() != nil, next < count {
                let index = next
                group.addTask { try await body(index) }
                next += 1
            }
            try await group.waitForAll()
        }
    }
}
