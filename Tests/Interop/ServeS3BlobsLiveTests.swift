import AetherIO
import Foundation
import Testing

/// `aether serve --blobs s3://BUCKET/PREFIX --endpoint URL` on moto (IAM signature checks on) with `aether upload`.
@Suite(.serialized) struct ServeS3BlobsLiveTests {
    static func environment(_ s3: S3PeerProcess, secret: String? = nil) -> [String: String] {
        [
            "AWS_ACCESS_KEY_ID": s3.accessKeyID, "AWS_SECRET_ACCESS_KEY": secret ?? s3.secretAccessKey,
            "AWS_REGION": "us-east-1", "AWS_PROFILE": "", "AWS_SESSION_TOKEN": "",
        ]
    }

    /// moto without access checks (`peers/s3_blob_peer.py`, bucket `aether-fleet`): moto's IAM check refuses a
    /// correctly signed ListObjectsV2 with a '/' in its prefix (boto3's as well).
    final class BlobPeer: @unchecked Sendable {
        // @unchecked: set once in init.
        let peer: LongRunningPeer
        let endpoint: String
        struct Started: Decodable { let port: UInt16 }
        init() throws {
            let (peer, started) = try LongRunningPeer.start("s3_blob_peer.py", announcing: Started.self)
            self.peer = peer
            endpoint = "http://127.0.0.1:\(started.port)"
        }
        struct Object: Decodable {
            let size: Int?
            let sha256: String?
        }
        func object(_ key: String) throws -> Object {
            try peer.request(["op": "get", "bucket": "aether-fleet", "key": key], as: Object.self)
        }
    }

    @Test func aNativeUploadThroughServeWithS3BlobsIsTheObjectInTheBucket() throws {
        let moto = try BlobPeer()
        let s3 = try S3PeerProcess.get()
        let prefix = "fleet-" + UUID().uuidString.lowercased().prefix(8)
        let store = try SessionLive.temporaryDirectory() + "/store"
        let child = try UploadChild(
            [
                "serve", "--dir", store, "--port", "0", "--blobs", "s3://aether-fleet/\(prefix)", "--endpoint",
                moto.endpoint,
            ], environment: Self.environment(s3))
        let url = try Self.listening(child)
        #expect(child.stdout.contains("blobs: s3://aether-fleet/\(prefix)"))
        // The S3 store's floor: no chunk under S3's 5 MiB part (a smaller piece is read back at completion); the
        // client's --chunk-size 1M below is raised to it.
        let capabilities = try Self.capabilities(url)
        #expect(capabilities.contains("min-chunk=5242880,"), "\(capabilities)")
        let (path, state, content) = try UploadCommandLiveTests.file(12 << 20 + 4321, seed: 91)
        let (status, run) = try UploadChild.run([
            "upload", path, url + "/uploads", "--state-dir", state, "--json", "--chunk-size", "1M", "--parallel", "2",
        ])
        #expect(status == 0, "\(run.stderr) \(child.stderr)")
        let done = try UploadCommandLiveTests.completed(run)
        let location = try #require(done["location"] as? String)
        let id = String(location.split(separator: "/").last ?? "")
        let object = try moto.object("\(prefix)/objects/\(id)")
        #expect(object.size == content.count)
        #expect(object.sha256 == SHA256.hash(content).hex)
        // The catalogue stays in --dir; no blob is there.
        #expect(FileManager.default.fileExists(atPath: store + "/catalog.sqlite3"))
        #expect(!FileManager.default.fileExists(atPath: store + "/objects/" + id))
    }

    /// A prefix whose bytes are not UTF-8 would name other keys than the ones typed (S3 keys are UTF-8): refused
    /// as a usage error before anything is asked of S3.
    @Test func aPrefixThatIsNotUTF8IsAUsageError() throws {
        let child = try UploadChild(
            ["serve", "--port", "0", "--dir", try SessionLive.temporaryDirectory() + "/store"],
            launcher: ["/bin/sh", "-c", "exec \"$0\" \"$@\" --blobs \"s3://bucket/$(printf 'a\\377')\""])
        #expect(try child.wait(timeout: 30) == 2)
        #expect(child.stderr.contains("must be UTF-8"), "\(child.stderr)")
    }

    /// `--min-chunk` replaces the store's floor (chunks of 256 KiB keep a cut chunk's loss small on a mobile link, at
    /// the cost of reading each piece back at completion); a size that is not a multiple of 16 KiB is a usage error.
    @Test func minChunkReplacesTheStoresFloor() throws {
        let moto = try BlobPeer()
        let s3 = try S3PeerProcess.get()
        let store = try SessionLive.temporaryDirectory() + "/store"
        let serve = ["serve", "--dir", store, "--port", "0", "--blobs", "s3://aether-fleet/floor", "--endpoint"]
        let child = try UploadChild(serve + [moto.endpoint, "--min-chunk", "256K"], environment: Self.environment(s3))
        let url = try Self.listening(child)
        let capabilities = try Self.capabilities(url)
        #expect(capabilities.contains("min-chunk=262144,"), "\(capabilities)")
        let (usage, refused) = try UploadChild.run(
            serve + [moto.endpoint, "--min-chunk", "100000"], environment: Self.environment(s3))
        #expect(usage == 2)
        #expect(refused.stderr.contains("--min-chunk must be a multiple of 16 KiB"), "\(refused.stderr)")
    }

    /// The URL `aether serve` printed once it listens.
    static func listening(_ child: UploadChild) throws -> String {
        var found: String?
        try SessionLive.wait("aether serve to listen", timeout: 60) {
            found = child.stdout.split(separator: "\n").first { $0.hasPrefix("listening on ") }
                .map { String($0.dropFirst("listening on ".count)) }
            return found != nil || !child.process.isRunning
        }
        return try #require(found, "aether serve did not start: \(child.stderr)")
    }

    /// The receiver's `Aether-Capabilities` line, from `curl -X OPTIONS`.
    static func capabilities(_ url: String) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/curl")
        process.arguments = ["-sS", "-X", "OPTIONS", "-D", "-", "-o", "/dev/null", url + "/uploads"]
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        let text = String(decoding: data, as: UTF8.self)
        return text.split(separator: "\r\n").first { $0.lowercased().hasPrefix("aether-capabilities:") }
            .map(String.init) ?? ""
    }

    @Test func aMissingBucketOrAWrongSecretIsNamedWithoutPrintingTheSecret() throws {
        let s3 = try S3PeerProcess.get()
        let store = try SessionLive.temporaryDirectory() + "/store"
        let (missing, absent) = try UploadChild.run(
            [
                "serve", "--dir", store, "--port", "0", "--blobs", "s3://no-such-bucket-here/p", "--endpoint",
                s3.endpoint,
            ],
            environment: Self.environment(s3))
        #expect(missing == 1)
        #expect(absent.stderr.contains("no-such-bucket-here does not exist"), "\(absent.stderr)")
        let secret = "wrong-secret-" + UUID().uuidString
        let (denied, refused) = try UploadChild.run(
            ["serve", "--dir", store, "--port", "0", "--blobs", "s3://\(s3.bucket)/p", "--endpoint", s3.endpoint],
            environment: Self.environment(s3, secret: secret))
        #expect(denied == 1)
        #expect(refused.stderr.contains("refused access"), "\(refused.stderr)")
        #expect(!refused.stderr.contains(secret) && !refused.stdout.contains(secret))
        let (unreachable, nobody) = try UploadChild.run(
            [
                "serve", "--dir", store, "--port", "0", "--blobs", "s3://\(s3.bucket)/p", "--endpoint",
                "http://127.0.0.1:9",
            ],
            environment: Self.environment(s3))
        #expect(unreachable == 1)
        #expect(nobody.stderr.contains("unreachable"), "\(nobody.stderr)")
    }
}
