import AetherIO
import AetherSecurity
import AetherTestSupport
import Foundation
import Testing

@testable import AetherUploader

/// A generator that returns one fixed word (to pin the inversion formula).
struct FixedGenerator: RandomNumberGenerator {
    let word: UInt64
    mutating func next() -> UInt64 { word }
}

@Suite struct UploadTelemetryTests {
    static func master() throws -> SymmetricKey {
        try SymmetricKey(secureBytes: SecureBytes(copying: [UInt8](repeating: 1, count: 32)))
    }

    static let trace = ChunkTrace(
        uploadID: "u/1", index: 3, offset: 12_582_912, length: 4_194_304, attempt: 1, startedAtMs: 1_700_000_000_000,
        durationMs: 250, outcome: .acknowledged, httpStatus: 204, transportProtocol: .http2TCP, connectionReused: true,
        pathChanges: 0, rttMicroseconds: 1500)

    @Test func aTraceIsOneCanonicalJSONLine() throws {
        let telemetry = UploadTelemetry(uploadID: "u/1", auditKey: try Self.master(), clock: ManualClock())
        let line = try telemetry.record(Self.trace)
        let expected =
            #"{"attempt":1,"connectionReused":true,"durationMs":250,"httpStatus":204,"index":3,"length":4194304,"#
            + #""offset":12582912,"outcome":"acknowledged","pathChanges":0,"rttMicroseconds":1500,"#
            + #""startedAtMs":1700000000000,"transportProtocol":"h2","uploadID":"u/1"}"# + "\n"
        #expect(String(decoding: line, as: UTF8.self) == expected)
        // Absent optionals are left out; the result decodes to the same trace.
        var bare = Self.trace
        bare.httpStatus = nil
        bare.rttMicroseconds = nil
        bare.outcome = .retried
        bare.errorCode = "timeout"
        bare.transportProtocol = .http3QUIC
        bare.pathChanges = 2
        let text = String(decoding: try CanonicalJSON.encode(bare), as: UTF8.self)
        #expect(!text.contains("httpStatus") && !text.contains("rtt") && !text.contains(" "))
        #expect(text.contains(#""errorCode":"timeout""#) && text.contains(#""transportProtocol":"h3""#))
        #expect(try CanonicalJSON.decode(ChunkTrace.self, from: text.utf8) == bare)
    }

    @Test func aTraceHoldsNoContentsPathsOrKeys() throws {
        // The field names are the whole vocabulary; none of them can carry bytes of the file or a key.
        let object = try JSONSerialization.jsonObject(with: Data(try CanonicalJSON.encode(Self.trace)))
        let keys = Set((object as? [String: Any] ?? [:]).keys)
        #expect(
            keys == [
                "attempt", "connectionReused", "durationMs", "httpStatus", "index", "length", "offset", "outcome",
                "pathChanges", "rttMicroseconds", "startedAtMs", "transportProtocol", "uploadID",
            ])
    }

    @Test func theAuditKeyAndMACsMatchAnIndependentComputation() throws {
        // Expected values from Python's hmac/hashlib (RFC 5869 HKDF written out, then HMAC-SHA-256); the key also
        // from `openssl kdf -keylen 32 -kdfopt digest:SHA256 -kdfopt hexkey:01..01 -kdfopt salt:aether-telemetry-v1
        // -kdfopt "info:aether-audit-v1 hmac-sha256" HKDF`.
        let key = try UploadTelemetry.auditKey(master: try Self.master())
        let expectedKey = try SymmetricKey(
            secureBytes: SecureBytes(
                copying: try Hex.decode("f73ce5c3d296e083cfcfd7ebeb44b1e6203c9263bbb6968d702774635f741892")))
        #expect(key == expectedKey)
        #expect(key != (try Self.master()))
        let clock = ManualClock(wall: .milliseconds(1_700_000_000_000))
        let telemetry = UploadTelemetry(uploadID: "u1", auditKey: key, clock: clock)
        let first = try telemetry.auditLine(.started)
        clock.advance(by: .milliseconds(250))
        let second = try telemetry.auditLine(.chunkAcknowledged, chunkIndex: 3)
        let mac0 = "02894bce829cc19bedabfb995a6fcae7f10cd8ef776634e17324c292c9ded853"
        let mac1 = "5a98cfa96b8562f244f3342dfbedea065c4edfc8669918900be510e86296214b"
        #expect(
            String(decoding: first, as: UTF8.self)
                == #"{"entry":{"event":"started","previousMAC":"","sequence":0,"timeMs":1700000000000,"uploadID":"u1"},"#
                + #""mac":"\#(mac0)"}"# + "\n")
        #expect(
            String(decoding: second, as: UTF8.self)
                == #"{"entry":{"chunkIndex":3,"event":"chunk-acknowledged","previousMAC":"\#(mac0)","sequence":1,"#
                + #""timeMs":1700000000250,"uploadID":"u1"},"mac":"\#(mac1)"}"# + "\n")
        #expect(try AuditLog.verify(lines: [first, second], key: key).map(\.event) == [.started, .chunkAcknowledged])
    }

    @Test func aChangedRemovedOrReorderedAuditLineFailsVerification() throws {
        let key = try UploadTelemetry.auditKey(master: try Self.master())
        let log = AuditLog(key: key)
        let lines = try (0..<3).map { index throws(UploaderError) in
            try log.append(uploadID: "u", event: .chunkAcknowledged, timeMs: 5, chunkIndex: index)
        }
        #expect(try AuditLog.verify(lines: lines, key: key).count == 3)
        let tampered = Array(
            String(decoding: lines[1], as: UTF8.self).replacingOccurrences(
                of: "\"chunkIndex\":1", with: "\"chunkIndex\":7"
            ).utf8)
        let spaced = Array(String(decoding: lines[0], as: UTF8.self).replacingOccurrences(of: ",", with: ", ").utf8)
        let cases: [[[UInt8]]] = [
            [lines[0], tampered, lines[2]], [lines[0], lines[2]], [lines[1], lines[0], lines[2]], [spaced],
            [Array("not json".utf8)],
        ]
        for bad in cases {
            let error = #expect(throws: UploaderError.self) { try AuditLog.verify(lines: bad, key: key) }
            #expect(error?.code == .verificationFailed)
        }
        let other = try UploadTelemetry.auditKey(master: SymmetricKey(size: .bits256))
        #expect(throws: UploaderError.self) { try AuditLog.verify(lines: lines, key: other) }
    }

    @Test func laplaceNoiseHasMeanZeroAndScaleB() {
        var generator = SplitMix64(seed: 20_261_130)
        let scale = 2.0
        let count = 200_000
        var sum = 0.0
        var sumAbsolute = 0.0
        var sumSquares = 0.0
        var beyond = 0
        let threshold = scale * log(20.0)
        for _ in 0..<count {
            let x = LaplaceNoise.sample(scale: scale, using: &generator)
            sum += x
            sumAbsolute += abs(x)
            sumSquares += x * x
            if abs(x) > threshold { beyond += 1 }
        }
        let n = Double(count)
        // Four standard errors: sd(x) = b sqrt 2, sd(|x|) = b, sd(x^2) = b^2 sqrt 20; P(|x| > b ln 20) = 5%.
        #expect(abs(sum / n) < 4 * scale * 2.0.squareRoot() / n.squareRoot())
        #expect(abs(sumAbsolute / n - scale) < 4 * scale / n.squareRoot())
        #expect(abs(sumSquares / n - 2 * scale * scale) < 4 * scale * scale * 20.0.squareRoot() / n.squareRoot())
        #expect(abs(Double(beyond) / n - 0.05) < 4 * (0.05 * 0.95 / n).squareRoot())
    }

    @Test func theInversionIsExactAtTheEnds() {
        // u = 0.5 / 2^52: x = b ln(2u) = -52 b ln 2; the largest word mirrors it (and stays finite).
        var low = FixedGenerator(word: 0)
        #expect(abs(LaplaceNoise.sample(scale: 3, using: &low) + 3 * 52 * log(2.0)) < 1e-9)
        var high = FixedGenerator(word: .max)
        #expect(abs(LaplaceNoise.sample(scale: 3, using: &high) - 3 * 52 * log(2.0)) < 1e-9)
    }

    @Test func theSummaryIsClampedAndNoisedWithTheDocumentedScales() throws {
        #expect(UploadSummary.scales == [5, 5, 5, 35, 65])
        let telemetry = UploadTelemetry(uploadID: "u", auditKey: try Self.master(), clock: ManualClock())
        for outcome in [ChunkOutcome.acknowledged, .retried, .acknowledged, .acknowledged] {
            var trace = Self.trace
            trace.outcome = outcome
            _ = try telemetry.record(trace)
        }
        let exact = telemetry.summary(completed: true, resumed: false, totalBytes: 1_000_000, seconds: 0.001)
        #expect(exact.fields == [1, 0, 0.25, 9, 6])
        let clamped = UploadSummary(completed: false, resumed: true, chunksSent: 1, retries: 9, bytes: 0, seconds: 0)
        #expect(clamped.fields == [0, 1, 1, 3, 0])
        // The export is the exact summary plus noise from the generator, as a canonical line.
        var first = SplitMix64(seed: 1)
        var second = SplitMix64(seed: 1)
        let line = try telemetry.exportedSummary(
            completed: true, resumed: false, totalBytes: 1_000_000, seconds: 0.001, using: &first)
        let noisy = exact.privatized(using: &second)
        #expect(line == (try CanonicalJSON.line(noisy)))
        #expect(noisy != exact)
        // Over many exports of one summary the noise averages out to the exact values.
        var generator = SplitMix64(seed: 3)
        var sums = [Double](repeating: 0, count: 5)
        let count = 20_000
        for _ in 0..<count {
            for (index, value) in exact.privatized(using: &generator).fields.enumerated() { sums[index] += value }
        }
        for (index, scale) in UploadSummary.scales.enumerated() {
            let bound = 4 * scale * 2.0.squareRoot() / Double(count).squareRoot()
            #expect(abs(sums[index] / Double(count) - exact.fields[index]) < bound)
        }
    }
}
