import AetherIO
import AetherReceiver
import AetherTransport
import Foundation
import Testing

/// The receiver's IETF and tus paths in process, driven by the project's own clients and by `curl`.
@Suite struct ReceiverProtocolTests {
    @Test(arguments: IETFInteropVersion.allCases)
    func theIETFBackendUploadsInSeveralAppendsAndTheObjectIsByteIdentical(version: IETFInteropVersion) async throws {
        let fixture = try ReceiverFixture()
        let backend = try await IETFResumableBackend.discover(
            creationURL: fixture.uploadsURL, client: fixture.client, version: version)
        let content = ReceiverFixture.bytes(100_000, seed: UInt64(version.rawValue))
        let (upload, receipt) = try await ReceiverFixture.upload(content, partSize: 30_000, backend)
        #expect(try fixture.object(at: upload.location) == content)
        #expect(receipt.serverSHA256 == SHA256.hash(content))
        let progress = try await backend.progress(of: upload)
        #expect(progress == .offset(100_000, complete: true))
    }

    @Test(arguments: IETFInteropVersion.allCases)
    func theIETFBackendResumesFromTheServersOffset(version: IETFInteropVersion) async throws {
        let fixture = try ReceiverFixture()
        let backend = try await IETFResumableBackend.discover(
            creationURL: fixture.uploadsURL, client: fixture.client, version: version)
        let content = ReceiverFixture.bytes(50_000, seed: 9)
        let layout = try PartLayout(
            objectSize: 50_000, preferred: 20_000, capabilities: backend.capabilities, alignment: 1)
        let description = UploadDescription(
            size: 50_000, layout: layout, contentType: nil, chainSessionID: "resume", sha256: SHA256.hash(content))
        let upload = try await backend.create(description)
        _ = try await backend.send(ReceiverFixture.part(0, content, layout), to: upload)
        // The first part again: the server answers 409 with its offset, the client sends nothing twice.
        _ = try await backend.send(ReceiverFixture.part(0, content, layout), to: upload)
        var receipts: [PartReceipt] = []
        for index in 0..<layout.partCount {
            receipts.append(try await backend.send(ReceiverFixture.part(index, content, layout), to: upload))
        }
        _ = try await backend.complete(
            upload, summary: CompletionSummary(parts: receipts, fileSHA256: SHA256.hash(content)))
        #expect(try fixture.object(at: upload.location) == content)
    }

    @Test(arguments: [6, 8])
    func curlCreatesAppendsResumesAndCompletes(version: Int) async throws {
        let fixture = try ReceiverFixture()
        let content = ReceiverFixture.bytes(70_000, seed: 4)
        let directory = fixture.directory.description
        let first = directory + "/first"
        let second = directory + "/second"
        _ = FileManager.default.createFile(atPath: first, contents: Data(content[0..<30_000]))
        _ = FileManager.default.createFile(atPath: second, contents: Data(content[30_000...]))
        let digest = "sha-256=:" + Data(SHA256.hash(content).bytes).base64EncodedString() + ":"
        let common = ["-H", "Upload-Draft-Interop-Version: \(version)"]
        let created = try Curl.run(
            ["-X", "POST", fixture.uploadsURL, "-H", "Upload-Complete: ?0", "-H", "Upload-Length: 70000"] + common
                + ["--data-binary", "@" + first, "-H", "Content-Type: application/octet-stream"])
        #expect(created.status == 201)
        #expect(created.header("Upload-Offset") == "30000")
        let location = try #require(created.header("Location"))
        let head = try Curl.run(["-I", fixture.url + location] + common)
        #expect(head.header("Upload-Offset") == "30000")
        #expect(head.header("Upload-Complete") == "?0")
        #expect(head.header("Cache-Control") == "no-store")
        #expect(head.header("Upload-Limit")?.contains(version == 6 ? "expires=" : "max-age=") == true)
        let wrong = try Curl.run(
            [
                "-X", "PATCH", fixture.url + location, "-H", "Upload-Offset: 0", "-H", "Upload-Complete: ?1", "-H",
                "Content-Type: application/partial-upload", "--data-binary", "@" + second,
            ] + common)
        #expect(wrong.status == 409)
        #expect(wrong.header("Upload-Offset") == "30000")
        let done = try Curl.run(
            [
                "-X", "PATCH", fixture.url + location, "-H", "Upload-Offset: 30000", "-H", "Upload-Complete: ?1", "-H",
                "Content-Type: application/partial-upload", "-H", "Repr-Digest: " + digest, "--data-binary",
                "@" + second,
            ] + common)
        #expect(done.status == 200)
        #expect(done.header("Upload-Complete") == "?1")
        #expect(done.header("Repr-Digest") == digest)
        #expect(try fixture.object(at: location) == content)
        let completedDelete = try Curl.run(["-X", "DELETE", fixture.url + location] + common)
        // Cancelling a completed upload removes its object too (IETF 4.5, tus termination).
        #expect(completedDelete.status == 204)
        #expect(try fixture.object(at: location) == nil)
        #expect(try Curl.run(["-I", fixture.url + location] + common).status == 410)
        let open = try Curl.run(["-X", "POST", fixture.uploadsURL, "-H", "Upload-Complete: ?0"] + common)
        let openLocation = try #require(open.header("Location"))
        let gone = try Curl.run(["-X", "DELETE", fixture.url + openLocation] + common)
        #expect(gone.status == 204)
        let after = try Curl.run(["-I", fixture.url + openLocation] + common)
        #expect(after.status == 410)
    }

    @Test func aCompletionWhoseReprDigestDiffersLeavesNoObject() async throws {
        let fixture = try ReceiverFixture()
        let content = ReceiverFixture.bytes(1000, seed: 5)
        let created = try await fixture.send(
            "POST", "/uploads", headers: [("Upload-Draft-Interop-Version", "8"), ("Upload-Complete", "?0")])
        let location = try #require(created.headers["Location"])
        let wrong = "sha-256=:" + Data(SHA256.hash([1, 2, 3]).bytes).base64EncodedString() + ":"
        let response = try await fixture.send(
            "PATCH", location,
            headers: [
                ("Upload-Draft-Interop-Version", "8"), ("Upload-Offset", "0"), ("Upload-Complete", "?1"),
                ("Content-Type", "application/partial-upload"), ("Repr-Digest", wrong),
            ], body: content)
        #expect(response.status == 422)
        #expect(try ReceiverFixture.problem(response).name == "digest-mismatch")
        #expect(try fixture.object(at: location) == nil)
    }

    @Test(arguments: [false, true])
    func theTusBackendUploadsWithAndWithoutConcatenation(concatenation: Bool) async throws {
        let fixture = try ReceiverFixture()
        let backend = try await TusBackend.discover(
            creationURL: fixture.uploadsURL, client: fixture.client,
            options: TusBackendOptions(useConcatenation: concatenation))
        let content = ReceiverFixture.bytes(90_000, seed: concatenation ? 11 : 12)
        let (upload, receipt) = try await ReceiverFixture.upload(content, partSize: 25_000, backend, sha256: false)
        #expect(try fixture.object(at: receipt.location) == content)
        if !concatenation {
            let progress = try await backend.progress(of: upload)
            #expect(progress == .offset(90_000, complete: false) || progress == .offset(90_000, complete: true))
        } else {
            // The partials are deleted once the final is verified: their bytes are not kept a second time.
            let partials = try #require(upload.partLocations)
            #expect(partials.count == 4)
            for partial in partials {
                let head = try await fixture.send("HEAD", partial, headers: [("Tus-Resumable", "1.0.0")])
                #expect([404, 410].contains(head.status))
                #expect(try fixture.object(at: partial) == nil)
            }
        }
    }

    @Test func aTusAppendWhoseChecksumDiffersIs460AndStoresNothing() async throws {
        let fixture = try ReceiverFixture()
        let created = try await fixture.send(
            "POST", "/uploads", headers: [("Tus-Resumable", "1.0.0"), ("Upload-Length", "100")])
        #expect(created.status == 201)
        #expect(created.headers["Upload-Expires"].flatMap(HTTPDate.parse) != nil)
        let location = try #require(created.headers["Location"])
        let body = ReceiverFixture.bytes(100, seed: 3)
        let wrong = Data(SHA1.hash([9])).base64EncodedString()
        let patch = try await fixture.send(
            "PATCH", location,
            headers: [
                ("Tus-Resumable", "1.0.0"), ("Upload-Offset", "0"), ("Content-Type", "application/offset+octet-stream"),
                ("Upload-Checksum", "sha1 " + wrong),
            ], body: body)
        #expect(patch.status == 460)
        let head = try await fixture.send("HEAD", location, headers: [("Tus-Resumable", "1.0.0")])
        #expect(head.status == 200)
        #expect(head.headers["Upload-Offset"] == "0")
        #expect(head.headers["Upload-Length"] == "100")
        let right = Data(SHA1.hash(body)).base64EncodedString()
        let good = try await fixture.send(
            "PATCH", location,
            headers: [
                ("Tus-Resumable", "1.0.0"), ("Upload-Offset", "0"), ("Content-Type", "application/offset+octet-stream"),
                ("Upload-Checksum", "sha1 " + right),
            ], body: body)
        #expect(good.status == 204)
        #expect(good.headers["Upload-Offset"] == "100")
        #expect(try fixture.object(at: location) == body)
    }

    @Test func tusDeferredLengthMetadataAndMethodOverride() async throws {
        let fixture = try ReceiverFixture()
        let created = try await fixture.send(
            "POST", "/uploads",
            headers: [
                ("Tus-Resumable", "1.0.0"), ("Upload-Defer-Length", "1"),
                ("Upload-Metadata", "filename c2Nhbi5iaW4=,empty"),
            ])
        #expect(created.status == 201)
        let location = try #require(created.headers["Location"])
        let head = try await fixture.send("HEAD", location, headers: [("Tus-Resumable", "1.0.0")])
        #expect(head.headers["Upload-Defer-Length"] == "1")
        #expect(try TusMetadata.decode(head.headers["Upload-Metadata"] ?? "") == ["filename": "scan.bin", "empty": ""])
        let body = ReceiverFixture.bytes(10, seed: 1)
        let patch = try await fixture.send(
            "POST", location,
            headers: [
                ("X-HTTP-Method-Override", "PATCH"), ("Tus-Resumable", "1.0.0"), ("Upload-Offset", "0"),
                ("Upload-Length", "10"), ("Content-Type", "application/offset+octet-stream"),
            ], body: body)
        #expect(patch.status == 204)
        #expect(patch.headers["Upload-Offset"] == "10")
        #expect(try fixture.object(at: location) == body)
        let document = try await fixture.send("GET", location)
        #expect(document.status == 405)
        let noVersion = try await fixture.send("HEAD", location, headers: [("Tus-Resumable", "0.2.2")])
        #expect(noVersion.status == 412)
        #expect(noVersion.headers["Tus-Version"] == "1.0.0")
    }

    @Test func optionsOffersEveryProtocolAndTheDetectorPicksNative() async throws {
        let fixture = try ReceiverFixture()
        let response = try await fixture.send("OPTIONS", "/uploads")
        #expect(response.status == 204)
        #expect(response.headers["Aether-Capabilities"].map { try? AetherCapabilities(parsing: $0) } != nil)
        #expect(response.headers["Tus-Version"] == "1.0.0")
        #expect(response.headers["Tus-Extension"]?.contains("concatenation") == true)
        #expect(response.headers["Upload-Limit"]?.contains("max-size=") == true)
        let detected = try await BackendDetector(client: fixture.client).detect(fixture.uploadsURL)
        #expect(detected.mode == .native)
        #expect(detected.fallbackReason == nil)
        let forced = try await BackendDetector(client: fixture.client).detect(
            fixture.uploadsURL, forcing: .ietfResumable)
        #expect(forced.mode == .ietfResumable)
    }
}

/// `curl` as a child process: status and headers of the final response.
enum Curl {
    struct Result {
        let status: Int
        let headers: [(String, String)]
        let body: String
        func header(_ name: String) -> String? {
            headers.last { $0.0.lowercased() == name.lowercased() }?.1
        }
    }

    static func run(_ arguments: [String]) throws -> Result {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/curl")
        process.arguments = ["-s", "-i", "--noproxy", "*", "-H", "Expect:"] + arguments
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        let text = String(decoding: data, as: UTF8.self)
        let parts = text.components(separatedBy: "\r\n\r\n")
        let head = parts.first ?? ""
        var lines = head.components(separatedBy: "\r\n")
        let statusLine = lines.isEmpty ? "" : lines.removeFirst()
        let status = Int(statusLine.split(separator: " ").dropFirst().first ?? "") ?? 0
        let headers = lines.compactMap { line -> (String, String)? in
            guard let colon = line.firstIndex(of: ":") else { return nil }
            return (String(line[..<colon]), line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces))
        }
        return Result(status: status, headers: headers, body: parts.dropFirst().joined(separator: "\r\n\r\n"))
    }
}
