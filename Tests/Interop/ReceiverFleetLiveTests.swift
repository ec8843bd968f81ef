import AetherIO
import AetherIntegrity
import AetherTestSupport
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Two `aether serve` processes on two ports sharing one PostgreSQL catalogue (`--catalog`) and, with the S3 blob
/// store, one bucket prefix of the test process's Ceph RGW (`--blobs s3://`; moto for the case that stops the S3
/// server), behind a round-robin relay that sends each request to the next receiver (docs/RECEIVER.md, fleet mode).
/// With both a catalogue and S3 blobs the receivers run without `--dir` (nothing is local). Without `--blobs` (the S3 blob store not built in) the cases that need
/// receivers sharing their blobs are skipped: two `--dir` stores cannot be shared safely (an append cuts its stream
/// back and a native chunk is written in place, so one receiver would cut or overwrite bytes the other acknowledged).
/// Serialized: each case runs PostgreSQL, two receivers and a relay, which the other process suites share.
@Suite(.serialized) struct ReceiverFleetLiveTests {
    /// Whether this `aether serve` takes `--blobs s3://`.
    static let hasS3Blobs: Bool = {
        guard let (_, out, _) = try? SessionLive.runAether(["serve", "--help"]) else { return false }
        return out.contains("--blobs")
    }()

    /// Where the receivers' blobs are.
    enum Blobs {
        /// Each receiver's `--dir`.
        case local
        /// A prefix of its own in the shared RGW's fleet bucket.
        case rgw
        /// moto's bucket (it can stop answering and come back).
        case moto
    }

    /// The receivers, their catalogue, their bucket and the relay in front of them.
    final class Fleet: @unchecked Sendable {
        // @unchecked: used from the creating test only.
        let postgres: PostgresProcess?
        let catalogURL: String?
        let moto: FleetMoto?
        let rgw: RGWPeer?
        /// The receivers' key prefix in the bucket.
        let prefix = "fleet-" + UUID().uuidString.prefix(8).lowercased()
        let directory: String
        let receivers: [AetherProcess]
        let ports: [UInt16]
        let relay: RoundRobinRelay

        /// `catalogue`: one PostgreSQL catalogue (else each receiver's own SQLite); `blobs`: where the blobs are.
        init(catalogue: Bool = true, blobs: Blobs = .local) throws {
            directory = try SessionLive.temporaryDirectory()
            postgres = catalogue ? try PostgresProcess() : nil
            catalogURL = try postgres?.createDatabase()
            moto = blobs == .moto ? try FleetMoto() : nil
            rgw = blobs == .rgw ? try RGWPeer.get() : nil
            var receivers: [AetherProcess] = []
            var ports: [UInt16] = []
            var environment = FleetMoto.credentials
            if let rgw { environment = rgw.server.credentialsEnvironment }
            for index in 0..<2 {
                // Chunks of 256 KiB (many chunks in a small file): under the S3 store's own 5 MiB floor.
                var arguments = ["serve", "--port", "0", "--min-chunk", "256K"]
                // Fleet mode keeps nothing local: no --dir with both the catalogue and the blobs elsewhere.
                if catalogURL == nil || blobs == .local { arguments += ["--dir", directory + "/store\(index)"] }
                if let catalogURL { arguments += ["--catalog", catalogURL] }
                if let moto {
                    arguments += ["--blobs", "s3://\(moto.bucket)/\(prefix)", "--endpoint", moto.endpoint]
                }
                if let rgw {
                    arguments += ["--blobs", "s3://\(RGWPeer.fleetBucket)/\(prefix)", "--endpoint", rgw.endpoint]
                }
                let (process, port) = try Self.startReceiver(arguments, environment: environment)
                receivers.append(process)
                ports.append(port)
            }
            self.receivers = receivers
            self.ports = ports
            relay = try RoundRobinRelay(ports: ports)
        }

        private static func startReceiver(_ arguments: [String], environment: [String: String]) throws -> (
            AetherProcess, UInt16
        ) {
            let process = try AetherProcess(arguments, inputBytes: [], keepInputOpen: true, environment: environment)
            var url: String?
            try SessionLive.wait("aether serve to listen", timeout: 30) {
                url = process.stdout.split(separator: "\n").first { $0.hasPrefix("listening on ") }
                    .map { String($0.dropFirst("listening on ".count)) }
                return url != nil || !process.process.isRunning
            }
            guard let url, let port = url.split(separator: ":").last.flatMap({ UInt16($0) }) else {
                process.stop()
                throw PythonPeer.PeerError(message: "aether serve did not start: \(process.stderr)")
            }
            return (process, port)
        }

        /// Request log lines of receiver `index` that contain `text`.
        func logLines(_ index: Int, containing text: String) -> Int {
            receivers[index].stderr.split(separator: "\n").filter { $0.contains(text) }.count
        }

        /// `kill -9` of receiver `index`.
        func killReceiver(_ index: Int) {
            kill(receivers[index].process.processIdentifier, SIGKILL)
            receivers[index].process.waitUntilExit()
        }

        /// The SHA-256 and size of every object under the receivers' prefix, as boto3 downloads it.
        func objects() throws -> [(sha256: String?, size: Int?)] {
            if let moto {
                return try moto.keys(prefix: prefix + "/").map { try moto.object($0) }.map { ($0.sha256, $0.size) }
            }
            if let rgw {
                return try rgw.keys(prefix: prefix + "/").map { try rgw.object($0, bucket: RGWPeer.fleetBucket) }
                    .map { ($0.sha256, $0.size) }
            }
            return []
        }

        deinit {
            for receiver in receivers { receiver.stop() }
            try? postgres?.stop()
            try? FileManager.default.removeItem(atPath: directory)
        }
    }

    /// `curl` fetching `url` `count` times on one kept-alive connection; the status of each.
    static func curlRepeatedly(_ url: String, count: Int) throws -> [String] {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/curl")
        process.arguments =
            ["-s", "-w", "%{http_code} %{num_connects}\\n"]
            + Array(repeating: ["-o", "/dev/null", url], count: count).flatMap { $0 }
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        return text.split(separator: "\n").map(String.init)
    }

    /// `--dir` may be left out only when neither the catalogue nor the blobs would be in it.
    @Test func serveWithoutDirNeedsBothTheCatalogueAndTheBlobsElsewhere() throws {
        for arguments in [
            ["serve", "--port", "0"], ["serve", "--port", "0", "--catalog", "postgresql:///x"],
            ["serve", "--port", "0", "--blobs", "s3://bucket/prefix"],
        ] {
            let (status, _, errors) = try SessionLive.runAether(arguments)
            #expect(status == 2, "\(arguments): \(errors)")
            #expect(errors.contains("--dir is required (unless both --catalog and --blobs are given)"), "\(errors)")
        }
    }

    @Test func theRelayAlternatesRequestsOfOneConnectionAndSkipsAReceiverThatRefuses() throws {
        let fleet = try Fleet(catalogue: false)
        let answers = try Self.curlRepeatedly(fleet.relay.url + "/healthz", count: 6)
        // Six answers, one connection (curl opened it for the first request only).
        #expect(answers == ["200 1"] + Array(repeating: "200 0", count: 5))
        #expect(try fleet.relay.stats == RoundRobinRelay.Stats(requests: [3, 3], skipped: 0, failed: 0))
        // Each receiver logged its three.
        #expect(fleet.logLines(0, containing: "GET /healthz 200") == 3)
        #expect(fleet.logLines(1, containing: "GET /healthz 200") == 3)
        fleet.killReceiver(1)
        let afterKill = try Self.curlRepeatedly(fleet.relay.url + "/healthz", count: 4)
        #expect(afterKill.map { $0.prefix(3) } == Array(repeating: "200", count: 4))
        let stats = try fleet.relay.stats
        // The four went to receiver 0: the first in turn, the other three after receiver 1 refused.
        #expect(stats.requests == [7, 3])
        #expect(stats.skipped == 3)
        #expect(fleet.logLines(0, containing: "GET /healthz 200") == 7)
    }

    /// IETF (interop version 8) and tus appends at one offset sent to both receivers at once.
    @Test(arguments: ["ietf", "tus"])
    func twoReceiversAppendingAtOneOffsetAtOnceExactlyOneWinsAndTheOtherGets409WithTheOffset(protocolName: String)
        throws
    {
        let fleet = try Fleet(blobs: Self.hasS3Blobs ? .rgw : .local)
        let ietf = protocolName == "ietf"
        let creation: [(String, String)] =
            ietf
            ? [("Upload-Draft-Interop-Version", "8"), ("Upload-Complete", "?0"), ("Upload-Length", "48")]
            : [("Tus-Resumable", "1.0.0"), ("Upload-Length", "48")]
        let created = try RaceRequests.send([RaceRequests.request(port: fleet.ports[0], "POST", "/uploads", creation)])
        #expect(created.first?.status == 201)
        let location = try #require(created.first?.headers["location"])
        let path =
            location.hasPrefix("http")
            ? "/" + location.split(separator: "/").dropFirst(2).joined(separator: "/") : location
        let id = try #require(path.split(separator: "/").last.map(String.init))
        let bytes = (0..<48).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ 11) }
        // With shared blobs every round races; with a store per receiver only the first (the winner's stream is in
        // its own store, so a later append on the other could not continue it).
        let rounds = Self.hasS3Blobs ? 3 : 1
        for round in 0..<rounds {
            let offset = round * 16
            let piece = Array(bytes[offset..<offset + 16])
            let fields: [(String, String)] =
                ietf
                ? [
                    ("Upload-Draft-Interop-Version", "8"), ("Upload-Offset", "\(offset)"),
                    ("Upload-Complete", round == 2 ? "?1" : "?0"), ("Content-Type", "application/partial-upload"),
                ]
                : [
                    ("Tus-Resumable", "1.0.0"), ("Upload-Offset", "\(offset)"),
                    ("Content-Type", "application/offset+octet-stream"),
                ]
            let answers = try RaceRequests.send(
                fleet.ports.map { RaceRequests.request(port: $0, "PATCH", path, fields, body: piece) })
            let statuses = answers.map(\.status).sorted()
            #expect(statuses.count == 2)
            #expect(statuses.last == 409, "\(answers)")
            #expect(statuses.first.map { (200..<300).contains($0) } == true, "\(answers)")
            // Both answers name the offset now stored.
            #expect(answers.map { $0.headers["upload-offset"] } == [String(offset + 16), String(offset + 16)])
        }
        // Both receivers took one of the racing requests of this upload.
        #expect(fleet.logLines(0, containing: id) >= 1)
        #expect(fleet.logLines(1, containing: id) >= 1)
        if Self.hasS3Blobs {
            let objects = try fleet.objects()
            #expect(objects.contains { $0.sha256 == SHA256.hash(bytes).hex }, "\(objects)")
        }
    }

    @Test func theSameNativeChunkSentToTwoReceiversAtOnceIsStoredOnceAndBothAnswersAgree() throws {
        let fleet = try Fleet(blobs: Self.hasS3Blobs ? .rgw : .local)
        let chunkSize = 256 * 1024
        var generator = SplitMix64(seed: 0x5eed)
        let chunk = (0..<chunkSize).map { _ in UInt8(truncatingIfNeeded: generator.next()) }
        let created = try RaceRequests.send([
            RaceRequests.request(
                port: fleet.ports[0], "POST", "/uploads",
                [("Aether-Protocol", "1"), ("Content-Type", "application/aether-upload+json")],
                body: Array(#"{"chainSessionID":"fleet","chunkSize":262144,"chunks":1,"size":262144}"#.utf8))
        ])
        #expect(created.first?.status == 201)
        let location = try #require(created.first?.headers["location"])
        let path = "/uploads/" + (location.split(separator: "/").last.map(String.init) ?? "")
        let sha256 = SHA256.hash(chunk)
        let link = ChunkCommitmentChain.link(
            chunkHash: sha256, previous: ChunkCommitmentChain.genesis(sessionID: "fleet"))
        let crc = CRC32C.checksum(chunk)
        let crcBytes = [
            UInt8(crc >> 24), UInt8(truncatingIfNeeded: crc >> 16), UInt8(truncatingIfNeeded: crc >> 8),
            UInt8(truncatingIfNeeded: crc),
        ]
        func base64(_ bytes: [UInt8]) -> String { ":" + Data(bytes).base64EncodedString() + ":" }
        let fields = [
            ("Aether-Protocol", "1"),
            (
                "Aether-Chunk",
                "length=\(chunkSize), crc32c=\(base64(crcBytes)), sha-256=\(base64(sha256.bytes)), "
                    + "link=\(base64(link.bytes))"
            ),
            ("Content-Digest", "sha-256=\(base64(sha256.bytes))"),
        ]
        let answers = try RaceRequests.send(
            fleet.ports.map { RaceRequests.request(port: $0, "PUT", path + "/chunks/0", fields, body: chunk) })
        // One stored it now (201), the other found it stored with the same bytes (200); both name the same receipt.
        #expect(answers.map(\.status).sorted() == [200, 201], "\(answers)")
        let receipts = answers.map { $0.headers["aether-receipt"] }
        #expect(receipts.first ?? nil != nil)
        #expect(receipts.first == receipts.last)
        #expect(receipts.first??.contains(base64(sha256.bytes)) == true)
        // Either receiver, asked what it holds, names one stored chunk (one receipt in the shared catalogue).
        for port in fleet.ports {
            let held = try RaceRequests.send([
                RaceRequests.request(port: port, "HEAD", path, [("Aether-Protocol", "1")])
            ])
            #expect(held.first?.headers["aether-received"] == "chunks=1, prefix=1", "\(held)")
            #expect(held.first?.headers["upload-offset"] == String(chunkSize))
        }
    }

    // MARK: Uploads through the relay (need --blobs s3://)

    /// What happens to the fleet while an upload runs.
    enum Fault: String, CaseIterable, Sendable {
        case none, killOneReceiver, restartPostgres, stopMoto
    }

    /// `aether upload FILE RELAY/uploads --protocol P` of `size` seeded bytes while `fault` strikes (after receiver 1
    /// logged a few requests of the upload); returns the upload's content once `aether upload` exited 0.
    static func upload(_ fleet: Fleet, protocolName: String, size: Int, fault: Fault) throws -> [UInt8] {
        var generator = SplitMix64(seed: UInt64(size) ^ 0xf1ee7)
        let content = (0..<size).map { _ in UInt8(truncatingIfNeeded: generator.next()) }
        let file = fleet.directory + "/\(protocolName)-\(fault.rawValue).bin"
        try Data(content).write(to: URL(fileURLWithPath: file))
        let client = try AetherProcess(
            [
                "upload", file, fleet.relay.url + "/uploads", "--protocol", protocolName, "--quiet", "--state-dir",
                fleet.directory + "/state-\(protocolName)-\(fault.rawValue)", "--chunk-size", "256K", "--parallel", "2",
            ],
            inputBytes: [])
        if fault != .none {
            let before = fleet.logLines(1, containing: " 20")
            try SessionLive.wait("receiver 1 to take some of the upload", timeout: 120) {
                fleet.logLines(1, containing: " 20") >= before + 3 || !client.process.isRunning
            }
            // The fault strikes mid-upload.
            #expect(client.process.isRunning, "the upload ended before the fault")
            switch fault {
            case .none: break
            case .killOneReceiver: fleet.killReceiver(1)
            case .restartPostgres:
                try fleet.postgres?.stop()
                usleep(2_000_000)
                try fleet.postgres?.start()
            case .stopMoto:
                try fleet.moto?.stop()
                usleep(2_000_000)
                try fleet.moto?.start()
            }
        }
        let (status, _, errors) = try client.wait(timeout: 600)
        #expect(status == 0, "aether upload: \(errors)")
        return content
    }

    /// The object whose bytes are `content`, read back from the bucket with boto3.
    static func expectStored(_ content: [UInt8], in fleet: Fleet) throws {
        let digest = SHA256.hash(content).hex
        let objects = try fleet.objects()
        #expect(objects.contains { $0.sha256 == digest && $0.size == content.count }, "no object holds the upload")
    }

    @Test(
        .enabled(if: hasS3Blobs, "aether serve has no --blobs (the S3 blob store)"),
        arguments: ["native", "ietf", "tus"])
    func nativeIETFAndTusUploadsThroughTheRelayCompleteByteIdentical(protocolName: String) throws {
        let fleet = try Fleet(blobs: .rgw)
        let content = try Self.upload(fleet, protocolName: protocolName, size: 3 << 20, fault: .none)
        try Self.expectStored(content, in: fleet)
        // The requests of the upload went to both receivers.
        let stats = try fleet.relay.stats
        #expect(stats.requests.allSatisfy { $0 >= 3 }, "\(stats)")
        #expect(fleet.logLines(0, containing: "/uploads") >= 3)
        #expect(fleet.logLines(1, containing: "/uploads") >= 3)
    }

    /// Dedup in a fleet: the same file uploaded again is answered by proof of possession, although the request
    /// that issued the challenge and the one that answers it went to different receivers (the relay alternates);
    /// no byte of the file is sent again.
    @Test(.enabled(if: hasS3Blobs, "aether serve has no --blobs (the S3 blob store)"))
    func aSecondUploadOfTheSameFileIsProvenAcrossReceiversAndSendsNoChunk() throws {
        let fleet = try Fleet(blobs: .rgw)
        let content = try Self.upload(fleet, protocolName: "native", size: 3 << 20, fault: .none)
        try Self.expectStored(content, in: fleet)
        let again = try AetherProcess(
            [
                "upload", fleet.directory + "/native-none.bin", fleet.relay.url + "/uploads", "--protocol", "native",
                "--json", "--state-dir", fleet.directory + "/state-again", "--chunk-size", "256K",
            ],
            inputBytes: [])
        let (status, output, errors) = try again.wait(timeout: 300)
        #expect(status == 0, "aether upload: \(errors)")
        let completed = output.split(separator: "\n").last { $0.contains("\"event\":\"completed\"") }
        #expect(completed?.contains("\"bytes_sent\":0") == true, "\(output)")
        let proven = fleet.logLines(0, containing: "/possession 200") + fleet.logLines(1, containing: "/possession 200")
        #expect(proven == 1)
        let digest = SHA256.hash(content).hex
        #expect(try fleet.objects().filter { $0.sha256 == digest }.count == 2)
    }

    @Test(
        .enabled(if: hasS3Blobs, "aether serve has no --blobs (the S3 blob store)"),
        arguments: [Fault.killOneReceiver, .restartPostgres, .stopMoto])
    func aNativeUploadCompletesThroughAFaultAndLosesNothingAcknowledged(fault: Fault) throws {
        // Stopping the S3 server is moto's (the shared RGW serves other suites meanwhile).
        let fleet = try Fleet(blobs: fault == .stopMoto ? .moto : .rgw)
        let content = try Self.upload(fleet, protocolName: "native", size: 12 << 20, fault: fault)
        try Self.expectStored(content, in: fleet)
        if fault == .restartPostgres || fault == .stopMoto {
            // The outage was answered 503 (and retried), not with a failure.
            let unavailable = fleet.logLines(0, containing: " 503 ") + fleet.logLines(1, containing: " 503 ")
            #expect(unavailable >= 1)
        }
    }
}
