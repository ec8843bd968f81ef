import AetherScheduling
import Foundation

/// `TraceLoader.load(path:family:)`, the throughput trace files (Pensieve/Lumos5G text, SABRE JSON,
/// 5Gophers CSV, NumPy `.npy`); the first byte selects the file kind, the rest is written to a temporary
/// file. Properties: no crash; errors are `.unreadableSource`; every loaded sample has a finite start, a
/// finite positive duration and a finite non-negative rate (ThroughputTrace.Sample's documented ranges).
func fuzzInput(_ bytes: UnsafeRawBufferPointer) {
    var cursor = FuzzCursor(unsafe Array(bytes))
    let names = ["trace.log", "trace.json", "throughput_data.csv", "y_true_0.npy"]
    let name = names[Int(cursor.u8()) % names.count]
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("aether-fuzz-trace-\(getpid())")
    let url = folder.appendingPathComponent(name)
    do {
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        try Data(cursor.rest).write(to: url)
    } catch {
        FuzzCheck.fail("cannot write the trace file: \(error)")
    }
    defer { try? FileManager.default.removeItem(at: url) }
    let traces: [ThroughputTrace]
    do {
        traces = try TraceLoader.load(path: url.path, family: "fuzz")
    } catch {
        FuzzCheck.require(error.code == .unreadableSource, "a reject must be unreadableSource, got \(error.code)")
        return
    }
    for trace in traces {
        for sample in trace.samples {
            FuzzCheck.require(sample.start.isFinite, "\(name): a sample starts at \(sample.start)")
            FuzzCheck.require(
                sample.duration.isFinite && sample.duration > 0, "\(name): a sample lasts \(sample.duration) s")
            FuzzCheck.require(
                sample.megabitsPerSecond.isFinite && sample.megabitsPerSecond >= 0,
                "\(name): a sample's rate is \(sample.megabitsPerSecond)")
        }
        _ = trace.meanMegabitsPerSecond
        _ = trace.coefficientOfVariation
    }
    FuzzCheck.accepted("\(name): \(traces.count) traces")
}
