import Foundation
import Testing

/// Memory of `aether upload` (issue 17): the peak RSS while uploading a 10 GiB sparse file to `aether serve` stays
/// under (parallel x chunk size) + 64 MiB. `make test` measures the first 30 s of the upload (with at least
/// 64 MiB acknowledged by then, so the part buffers have turned over); `AETHER_TORTURE=1` runs it to the end.
/// Dedup (which reads the whole file for its content id first) and compression (zeros shrink to nothing) are off,
/// so the bytes measured are the part buffers on the wire.
@Suite struct UploadMemoryLiveTests {
    @Test func thePeakRSSOfATenGiBUploadStaysUnderParallelTimesChunkPlus64MiB() throws {
        let torture = ProcessInfo.processInfo.environment["AETHER_TORTURE"] == "1"
        let receiver = try ReceiverChild()
        defer { try? FileManager.default.removeItem(atPath: receiver.store) }
        let directory = try SessionLive.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/sparse.bin"
        _ = FileManager.default.createFile(atPath: path, contents: nil)
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
        try handle.truncate(atOffset: 10 << 30)
        try handle.close()
        let parallel = 4
        let chunk = 4 << 20
        let output = try PythonPeer.run(
            "peak_rss.py",
            [
                torture ? "3600" : "30", SessionLive.aetherPath, "upload", path, receiver.url + "/uploads",
                "--state-dir", directory + "/state", "--chunk-size", "4M", "--parallel", String(parallel),
                "--protocol", "native", "--quiet", "--flags", "-dedup,-compression",
            ])
        let fields = String(decoding: output, as: UTF8.self).split(whereSeparator: \.isWhitespace)
        let status = try #require(fields.first.flatMap { Int($0) })
        let peakKiB = try #require(fields.dropFirst().first.flatMap { Int($0) })
        let received = try #require(
            ReceiverLoadLiveTests.sample(
                try ReceiverLoadLiveTests.metrics(receiver.url), "aether_received_bytes_total"))
        if torture {
            #expect(status == 0)
        } else {
            #expect(status == 0 || status == -9)
            #expect(received >= Double(64 << 20), "too little was uploaded in 30 s to measure")
        }
        let boundKiB = (parallel * chunk + (64 << 20)) / 1024
        #expect(peakKiB < boundKiB, "peak RSS \(peakKiB) KiB")
        print(
            "upload memory: 10 GiB sparse file, \(Int(received) >> 20) MiB stored, peak RSS \(peakKiB / 1024) MiB "
                + "(bound \(boundKiB / 1024) MiB)")
    }
}
