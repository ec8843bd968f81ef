import AetherIO
import AetherReceiver
import AetherScheduling
import Foundation
import Synchronization
import Testing

@testable import AetherTransport
@testable import AetherUploader

/// The device's state reaches a real upload: a fake sysfs/procfs tree (`UploadConfiguration.resourceRoot`) whose
/// battery drops to 10 % and whose thermal zone rises past the limit mid-upload caps the streams and the request
/// size at the next decision, and they come back when the device recovers, with hysteresis (the events show both).
@Suite(.serialized) struct ResourceLevelUploadTests {
    /// A device tree under `root`: one battery and one thermal zone.
    static func device(_ root: String, battery: Int, celsius: Int) throws {
        let power = root + "/sys/class/power_supply/BAT0"
        let thermal = root + "/sys/class/thermal/thermal_zone0"
        for directory in [power, thermal] {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        }
        try Data("Battery\n".utf8).write(to: URL(fileURLWithPath: power + "/type"))
        try Data("Discharging\n".utf8).write(to: URL(fileURLWithPath: power + "/status"))
        try Data("\(battery)\n".utf8).write(to: URL(fileURLWithPath: power + "/capacity"), options: .atomic)
        try Data("\(celsius * 1000)\n".utf8).write(to: URL(fileURLWithPath: thermal + "/temp"), options: .atomic)
    }

    @Test func aHotLowDeviceCapsStreamsAndRequestsAtTheNextDecisionAndTheyComeBackWhenItRecovers() async throws {
        let content = UploadFixture.seeded(12 << 20, seed: 41)
        let fixture = try NativeUploadFixture(bytes: content)
        let root = fixture.upload.directory + "/device"
        try Self.device(root, battery: 90, celsius: 40)
        var configuration = UploadConfiguration(initialBackoff: 0.001, maximumBackoff: 0.004)
        configuration.partSize = 64 << 10
        configuration.maximumBytesPerSecond = 6 << 20
        configuration.resourceRoot = root
        configuration.resourceInterval = 0
        var thresholds = ResourceStateMachine.Configuration()
        thresholds.debounceSeconds = 0
        configuration.resourceThresholds = thresholds
        let uploader = ChunkedUploader(
            target: .init(
                file: FilePath(fixture.upload.file), destination: fixture.destination, mode: .native),
            backend: try await fixture.backend(), snapshots: try fixture.upload.store(),
            snapshotKey: SnapshotKey.derive(
                canonicalPath: FilePath(fixture.upload.file), destination: fixture.destination),
            configuration: configuration, breaker: UploadCircuitBreaker(configuration: UploadFixture.lenientBreaker))
        // Acknowledged bytes: past a quarter the device degrades, past two thirds it recovers.
        struct Seen {
            var acknowledged: Int64 = 0
            var phase = 0
            var tiers: [(phase: Int, report: TierReport)] = []
        }
        let seen = Mutex(Seen())
        let total = Int64(content.count)
        let outcome = try await uploader.run { event in
            switch event {
            case .tierChanged(let report):
                seen.withLock { $0.tiers.append(($0.phase, report)) }
            case .chunkAcknowledged(let receipt):
                let phase = seen.withLock { state -> Int in
                    state.acknowledged += receipt.length
                    let next = state.acknowledged > total * 2 / 3 ? 2 : state.acknowledged > total / 4 ? 1 : 0
                    defer { state.phase = max(state.phase, next) }
                    return next > state.phase ? next : -1
                }
                if phase == 1 { try? Self.device(root, battery: 10, celsius: 80) }
                if phase == 2 { try? Self.device(root, battery: 90, celsius: 40) }
            default: break
            }
        }
        #expect(try fixture.object(at: outcome.receipt.location) == content)
        let tiers = seen.withLock { $0.tiers }
        let summary = tiers.map {
            "\($0.phase):\($0.report.resourceLevel)/\($0.report.parallelism)x\($0.report.requestSize)"
        }
        // Before: full speed. Degraded: severe (80 °C is past 75 x 1.05; 10 % battery alone is heavy), so one stream
        // and requests of at most 1 MiB (the severe level's chunk cap), reported at the first decision after the
        // device changed. Recovered: back to normal with more than one stream.
        #expect(
            tiers.first.map { $0.report.resourceLevel == .normal && $0.report.parallelism > 1 } == true, "\(summary)")
        let degraded = tiers.first { $0.report.resourceLevel == .severe }
        #expect(degraded?.phase == 1, "\(summary)")
        #expect(tiers.first { $0.phase == 1 }?.report.resourceLevel == .severe, "\(summary)")
        #expect(degraded.map { $0.report.parallelism == 1 && $0.report.requestSize <= 1 << 20 } == true, "\(summary)")
        let recovered = tiers.last { $0.phase == 2 && $0.report.resourceLevel == .normal }
        #expect(recovered.map { $0.report.parallelism > 1 } == true, "\(summary)")
    }
}
