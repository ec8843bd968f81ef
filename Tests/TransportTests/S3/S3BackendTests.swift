import AetherIO
import Foundation
import Testing

@testable import AetherTransport

/// `S3Backend` against a scripted server: the requests it builds, retries and back-off, error mapping, the
/// 200-with-error completion, ListParts pagination, and refusals of bad input.
@Suite struct S3BackendTests {
    static let emptySHA256 = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"

    static func multipart(_ backend: S3Backend, parts: Int = 3) -> RemoteUpload {
        RemoteUpload(
            location: backend.objectURL, uploadID: "UPLOAD-1", size: Int64(parts) * (5 << 20), partSize: 5 << 20)
    }

    static func part(_ index: Int, bytes: [UInt8], partSize: Int64 = 5 << 20) -> UploadPart {
        UploadPart(
            index: index, offset: Int64(index) * partSize, body: .bytes(bytes), length: Int64(bytes.count),
            sha256: SHA256.hash(bytes), crc32c: CRC32C.checksum(bytes))
    }

    @Test func createSendsASignedPostWithTheChecksumAlgorithmAndMetadata() async throws {
        let server = ScriptedS3Transport([
            .init(
                status: 200,
                body: "<InitiateMultipartUploadResult xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\">"
                    + "<Bucket>bucket</Bucket><Key>dir/object.bin</Key><UploadId>abc.DEF-123</UploadId>"
                    + "</InitiateMultipartUploadResult>")
        ])
        let backend = try server.backend()
        let layout = try PartLayout(objectSize: 12 << 20, preferred: 5 << 20, capabilities: backend.capabilities)
        let upload = try await backend.create(
            UploadDescription(
                size: 12 << 20, layout: layout, contentType: "video/mp4", metadata: ["Origin": "scan"],
                chainSessionID: "x"))
        #expect(upload.uploadID == "abc.DEF-123")
        #expect(upload.location == "http://127.0.0.1:9000/bucket/dir/object.bin")
        let request = try #require(server.requests.first)
        #expect(request.method == "POST")
        #expect(request.url == "http://127.0.0.1:9000/bucket/dir/object.bin?uploads")
        #expect(request.headers["x-amz-checksum-algorithm"] == "CRC32C")
        #expect(request.headers["x-amz-meta-origin"] == "scan")
        #expect(request.headers["Content-Type"] == "video/mp4")
        #expect(request.headers["x-amz-content-sha256"] == Self.emptySHA256)
        #expect(request.headers["X-Amz-Date"] == "20150830T123600Z")
        let authorization = try #require(request.headers["Authorization"])
        #expect(
            authorization.hasPrefix(
                "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/s3/aws4_request, SignedHeaders="
                    + "content-type;host;x-amz-checksum-algorithm;x-amz-content-sha256;x-amz-date;x-amz-meta-origin,"))
    }

    @Test func aPartCarriesItsCRC32CInBase64AndItsSHA256AsThePayloadHash() async throws {
        let bytes = Array("123456789".utf8)
        let server = ScriptedS3Transport([.init(status: 200, headers: ["ETag": "\"e1\""])])
        let backend = try server.backend()
        let upload = RemoteUpload(location: backend.objectURL, uploadID: "U/1", size: 9, partSize: 9)
        let receipt = try await backend.send(Self.part(0, bytes: bytes, partSize: 9), to: upload)
        #expect(receipt.entityTag == "\"e1\"")
        #expect(receipt.checksumCRC32C == 0xE306_9283)
        let request = try #require(server.requests.first)
        #expect(request.url == "http://127.0.0.1:9000/bucket/dir/object.bin?partNumber=1&uploadId=U%2F1")
        // CRC32C("123456789") = 0xE3069283 (RFC 3720), big-endian then base64.
        #expect(request.headers["x-amz-checksum-crc32c"] == "4waSgw==")
        #expect(request.headers["x-amz-content-sha256"] == SHA256.hash(bytes).hex)
    }

    @Test func aServerThatRecordsAnotherCRC32CIsCaught() async throws {
        let server = ScriptedS3Transport([
            .init(status: 200, headers: ["ETag": "\"e1\"", "x-amz-checksum-crc32c": "AAAAAA=="])
        ])
        let backend = try server.backend()
        let upload = RemoteUpload(location: backend.objectURL, uploadID: "U", size: 9, partSize: 9)
        let error = await #expect(throws: TransportError.self) {
            _ = try await backend.send(Self.part(0, bytes: Array("123456789".utf8), partSize: 9), to: upload)
        }
        // The server's word about the part's bytes disagrees with the client's: final (exit 4), not retried.
        #expect(error?.code == .receiptMismatch)
        #expect(server.requests.count == 1)
    }

    /// The object CRC32C of a CompleteMultipartUploadResult against the parts' CRC32Cs. Vectors from a bitwise
    /// CRC-32C (polynomial 0x82F63B78) in Python: parts "123456789" (4waSgw==) and "abcdefghij" (5lmUNw==);
    /// COMPOSITE = CRC-32C of their 8 big-endian bytes, `joZV2Q==-2`; FULL_OBJECT = CRC-32C of the 19 bytes,
    /// `Q0DOEA==`.
    @Test func theObjectChecksumOfTheCompletionIsComparedWithTheParts() async throws {
        let parts = [
            PartReceipt(
                index: 0, length: 9, entityTag: "\"a\"", checksumCRC32C: CRC32C.checksum(Array("123456789".utf8))),
            PartReceipt(
                index: 1, length: 10, entityTag: "\"b\"", checksumCRC32C: CRC32C.checksum(Array("abcdefghij".utf8))),
        ]
        try S3Backend.checkObjectCRC32C("joZV2Q==-2", type: nil, parts: parts)
        try S3Backend.checkObjectCRC32C("joZV2Q==-2", type: "COMPOSITE", parts: parts)
        try S3Backend.checkObjectCRC32C("Q0DOEA==", type: "FULL_OBJECT", parts: parts)
        try S3Backend.checkObjectCRC32C("Q0DOEA==", type: nil, parts: parts)
        for (reported, type) in [("joZV2Q==-3", nil), ("AAAAAA==-2", "COMPOSITE"), ("AAAAAA==", "FULL_OBJECT")] {
            let error = #expect(throws: TransportError.self) {
                try S3Backend.checkObjectCRC32C(reported, type: type, parts: parts)
            }
            #expect(error?.code == .receiptMismatch)
            #expect(error?.message.contains(reported) == true)
        }
        // Parts without a CRC32C (Ceph, a resume from parts listed without one) give nothing to compare.
        try S3Backend.checkObjectCRC32C(
            "AAAAAA==-2", type: nil, parts: parts.map { PartReceipt(index: $0.index, length: $0.length) })

        let server = ScriptedS3Transport([
            .init(
                status: 200,
                body: "<CompleteMultipartUploadResult><ETag>\"f\"</ETag><ChecksumCRC32C>AAAAAA==-2</ChecksumCRC32C>"
                    + "</CompleteMultipartUploadResult>")
        ])
        let backend = try server.backend()
        let upload = RemoteUpload(location: backend.objectURL, uploadID: "U", size: 19, partSize: 10)
        let error = await #expect(throws: TransportError.self) {
            _ = try await backend.complete(
                upload,
                summary: CompletionSummary(
                    parts: [
                        PartReceipt(index: 0, length: 10, entityTag: "\"a\"", checksumCRC32C: 1),
                        PartReceipt(index: 1, length: 9, entityTag: "\"b\"", checksumCRC32C: 2),
                    ], fileSHA256: .zero))
        }
        #expect(error?.code == .receiptMismatch)
        #expect(server.requests.count == 1)
    }

    @Test func slowDownIsRetriedWithJitteredExponentialBackOffAndFreshSignatures() async throws {
        let server = ScriptedS3Transport([
            ScriptedS3Transport.error("SlowDown", status: 503), ScriptedS3Transport.error("InternalError", status: 500),
            .init(status: 204),
        ])
        let backend = try server.backend(retry: S3RetryPolicy(maximumAttempts: 3, baseDelay: .milliseconds(100)))
        try await backend.abort(Self.multipart(backend))
        #expect(server.requests.count == 3)
        // random() is 0.5: half of 100 ms, then half of 200 ms.
        #expect(server.sleeps == [.milliseconds(50), .milliseconds(100)])
        #expect(server.requests.allSatisfy { $0.method == "DELETE" && $0.headers["Authorization"] != nil })
    }

    @Test func slowDownThatNeverEndsIsThrottledAfterTheBoundedAttempts() async throws {
        let server = ScriptedS3Transport(Array(repeating: ScriptedS3Transport.error("SlowDown", status: 503), count: 9))
        let backend = try server.backend(retry: S3RetryPolicy(maximumAttempts: 4))
        do {
            try await backend.abort(Self.multipart(backend))
            Issue.record("a never-ending SlowDown succeeded")
        } catch {
            #expect(error.code == .throttled)
            #expect(error.message.contains("SlowDown"))
            #expect(error.message.contains("after 4 attempts"))
        }
        #expect(server.requests.count == 4)
        #expect(server.sleeps.count == 3)
    }

    @Test func aStreamedPartIsNotRetriedByTheBackend() async throws {
        let server = ScriptedS3Transport([
            ScriptedS3Transport.error("SlowDown", status: 503), .init(status: 200, headers: ["ETag": "\"e\""]),
        ])
        let backend = try server.backend()
        let upload = RemoteUpload(location: backend.objectURL, uploadID: "U", size: 4, partSize: 4)
        let stream = HTTPBodyStream(length: 4)
        let part = UploadPart(
            index: 0, offset: 0, body: .stream(stream), length: 4, sha256: SHA256.hash([1, 2, 3, 4]),
            crc32c: CRC32C.checksum([1, 2, 3, 4]))
        do {
            _ = try await backend.send(part, to: upload)
            Issue.record("the throttled part succeeded")
        } catch {
            #expect(error.code == .throttled)
        }
        #expect(server.requests.count == 1)
    }

    @Test func aCompletionAnswered200WithAnErrorBodyFailsOrIsRetried() async throws {
        let receipts = (0..<2).map { PartReceipt(index: $0, length: 5 << 20, entityTag: "\"t\($0)\"") }
        let summary = CompletionSummary(parts: receipts, fileSHA256: .zero)
        let denied = ScriptedS3Transport([ScriptedS3Transport.error("AccessDenied", status: 200)])
        let backend = try denied.backend()
        do {
            _ = try await backend.complete(Self.multipart(backend, parts: 2), summary: summary)
            Issue.record("a 200 with an Error body completed")
        } catch {
            #expect(error.code == .accessDenied)
        }
        #expect(denied.requests.count == 1)

        let flaky = ScriptedS3Transport([
            ScriptedS3Transport.error("InternalError", status: 200),
            .init(
                status: 200,
                body: "  \n<CompleteMultipartUploadResult><ETag>\"final-2\"</ETag></CompleteMultipartUploadResult>"),
        ])
        let retried = try flaky.backend()
        let receipt = try await retried.complete(Self.multipart(retried, parts: 2), summary: summary)
        #expect(receipt.entityTag == "\"final-2\"")
        #expect(flaky.requests.count == 2)
        let body = String(decoding: try #require(flaky.requests.first?.body.storageBytes), as: UTF8.self)
        #expect(
            body
                == "<CompleteMultipartUpload xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\">"
                + "<Part><PartNumber>1</PartNumber><ETag>\"t0\"</ETag></Part>"
                + "<Part><PartNumber>2</PartNumber><ETag>\"t1\"</ETag></Part></CompleteMultipartUpload>")
        #expect(flaky.requests.first?.headers["x-amz-content-sha256"] == SHA256.hash(Array(body.utf8)).hex)
    }

    @Test func listPartsFollowsTheMarkerAcrossPages() async throws {
        func page(_ parts: [Int], truncated: Bool, next: Int?) -> ScriptedS3Transport.Answer {
            var body = "<ListPartsResult><IsTruncated>\(truncated)</IsTruncated>"
            if let next { body += "<NextPartNumberMarker>\(next)</NextPartNumberMarker>" }
            for number in parts {
                body +=
                    "<Part><PartNumber>\(number)</PartNumber><ETag>\"e\(number)\"</ETag><Size>5242880</Size>"
                    + "<ChecksumCRC32C>4waSgw==</ChecksumCRC32C></Part>"
            }
            return .init(status: 200, body: body + "</ListPartsResult>")
        }
        let server = ScriptedS3Transport([
            page([1, 2], truncated: true, next: 2), page([3, 5], truncated: true, next: 5),
            page([], truncated: false, next: nil),
        ])
        let backend = try server.backend(listPartsPageSize: 2)
        let progress = try await backend.progress(of: Self.multipart(backend, parts: 6))
        guard case .parts(let parts) = progress else {
            Issue.record("not parts: \(progress)")
            return
        }
        #expect(parts.map(\.index) == [0, 1, 2, 4])
        #expect(parts.allSatisfy { $0.checksumCRC32C == 0xE306_9283 && $0.length == 5 << 20 })
        #expect(
            server.requests.map(\.url) == [
                "http://127.0.0.1:9000/bucket/dir/object.bin?max-parts=2&uploadId=UPLOAD-1",
                "http://127.0.0.1:9000/bucket/dir/object.bin?max-parts=2&uploadId=UPLOAD-1&part-number-marker=2",
                "http://127.0.0.1:9000/bucket/dir/object.bin?max-parts=2&uploadId=UPLOAD-1&part-number-marker=5",
            ])
    }

    @Test func listPartsWithAStuckMarkerOrAForeignPartIsAProtocolViolation() async throws {
        let stuck = ScriptedS3Transport(
            Array(
                repeating: .init(
                    status: 200,
                    body:
                        "<ListPartsResult><IsTruncated>true</IsTruncated><NextPartNumberMarker>0</NextPartNumberMarker>"
                        + "</ListPartsResult>"), count: 3))
        let backend = try stuck.backend()
        await #expect(throws: TransportError.self) { _ = try await backend.progress(of: Self.multipart(backend)) }
        let foreign = ScriptedS3Transport([
            .init(
                status: 200,
                body: "<ListPartsResult><IsTruncated>false</IsTruncated><Part><PartNumber>99</PartNumber>"
                    + "<ETag>x</ETag><Size>1</Size></Part></ListPartsResult>")
        ])
        let other = try foreign.backend()
        do {
            _ = try await other.progress(of: Self.multipart(other))
            Issue.record("part 99 of a 3-part upload was accepted")
        } catch {
            #expect(error.code == .protocolViolation)
        }
    }

    @Test func aVanishedUploadIsGone() async throws {
        let server = ScriptedS3Transport([ScriptedS3Transport.error("NoSuchUpload", status: 404)])
        let backend = try server.backend()
        #expect(try await backend.progress(of: Self.multipart(backend)) == .gone)
    }

    @Test func aRefusedSignatureNamesTheKeyIdButNeverTheSecretOrSignature() async throws {
        let secret = "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY"
        let server = ScriptedS3Transport([
            ScriptedS3Transport.error(
                "SignatureDoesNotMatch",
                "The request signature we calculated does not match. <StringToSign>AWS4-HMAC-SHA256</StringToSign>",
                status: 403)
        ])
        let backend = try server.backend(secret: secret)
        do {
            try await backend.abort(Self.multipart(backend))
            Issue.record("a refused signature succeeded")
        } catch {
            #expect(error.code == .accessDenied)
            let signature = try #require(server.requests.first?.headers["Authorization"]?.split(separator: "=").last)
            for text in [error.description, error.message, String(reflecting: error), "\(backend)"] {
                #expect(!text.contains(secret))
                #expect(!text.contains(String(signature)))
                #expect(!text.contains("StringToSign"))
            }
        }
    }

    @Test(arguments: [
        ("AccessDenied", 403, TransportError.Code.accessDenied), ("InvalidAccessKeyId", 403, .accessDenied),
        ("ExpiredToken", 400, .accessDenied), ("NoSuchBucket", 404, .gone), ("NoSuchUpload", 404, .gone),
        ("SlowDown", 503, .throttled), ("InternalError", 500, .serverFailed), ("EntityTooSmall", 400, .remoteRejected),
        ("InvalidPart", 400, .remoteRejected), ("", 403, .accessDenied), ("", 410, .gone), ("", 502, .serverFailed),
        ("", 429, .throttled), ("", 400, .remoteRejected), ("BadDigest", 400, .checksumMismatch),
        ("XAmzContentSHA256Mismatch", 400, .checksumMismatch),
    ])
    func s3ErrorCodesMapToTransportErrorCodes(_ code: String, _ status: Int, _ expected: TransportError.Code) {
        let body = code.isEmpty ? Array("<html>proxy</html>".utf8) : Array("<Error><Code>\(code)</Code></Error>".utf8)
        #expect(S3ErrorMapping.error(operation: "Op", status: status, body: body).code == expected)
    }

    @Test func aSinglePartObjectIsOnePutObjectWithItsHeaders() async throws {
        let server = ScriptedS3Transport([.init(status: 200, headers: ["ETag": "\"one\""])])
        let backend = try server.backend()
        let layout = try PartLayout(objectSize: 3, preferred: 5 << 20, capabilities: backend.capabilities)
        let upload = try await backend.create(
            UploadDescription(
                size: 3, layout: layout, contentType: "text/plain", metadata: ["a": "b"], chainSessionID: "x"))
        #expect(upload.uploadID == nil)
        #expect(server.requests.isEmpty)
        let receipt = try await backend.send(Self.part(0, bytes: [1, 2, 3]), to: upload)
        let request = try #require(server.requests.first)
        #expect(request.method == "PUT")
        #expect(request.url == "http://127.0.0.1:9000/bucket/dir/object.bin")
        #expect(request.headers["Content-Type"] == "text/plain")
        #expect(request.headers["x-amz-meta-a"] == "b")
        let done = try await backend.complete(upload, summary: CompletionSummary(parts: [receipt], fileSHA256: .zero))
        #expect(done.entityTag == "\"one\"")
        #expect(try await backend.progress(of: upload) == .parts([]))
    }

    @Test func partsThatDoNotFitTheLayoutOrAForeignUploadAreRefused() async throws {
        let server = ScriptedS3Transport([])
        let backend = try server.backend()
        let upload = Self.multipart(backend)
        await #expect(throws: TransportError.self) {
            _ = try await backend.send(Self.part(3, bytes: [1]), to: upload)
        }
        await #expect(throws: TransportError.self) {
            _ = try await backend.send(Self.part(0, bytes: [1, 2]), to: upload)
        }
        var foreign = upload
        foreign.location = "http://127.0.0.1:9000/bucket/other"
        await #expect(throws: TransportError.self) { try await backend.abort(foreign) }
        await #expect(throws: TransportError.self) {
            _ = try await backend.complete(
                upload, summary: CompletionSummary(parts: [PartReceipt(index: 0, length: 1)], fileSHA256: .zero))
        }
        #expect(server.requests.isEmpty)
    }

    @Test func malformedXMLIsAProtocolViolationNeverACrash() {
        for text in [
            "", "   ", "<a><b></a>", "<a>", "not xml",
            String(repeating: "<a>", count: 40) + String(repeating: "</a>", count: 40),
            "<!DOCTYPE a [<!ENTITY e SYSTEM \"file:///etc/passwd\">]><a>&e;</a>", "<a/><b/>",
        ] {
            do {
                let element = try S3XMLElement.parse(Array(text.utf8))
                Issue.record("parsed \(text.prefix(40)) as \(element.name)")
            } catch {
                #expect(error.code == .protocolViolation)
            }
        }
        #expect((try? S3XMLElement.parse(Array("<a:X xmlns:a=\"u\"><a:Y> t </a:Y></a:X>".utf8)))?.text("Y") == "t")
    }
}

extension HTTPRequestBody {
    /// The bytes of a body held in memory (tests).
    var storageBytes: [UInt8]? {
        guard case .pieces(let pieces, _) = storage else { return nil }
        return pieces.flatMap { piece -> [UInt8] in
            if case .bytes(let bytes) = piece { return bytes }
            return []
        }
    }
}
