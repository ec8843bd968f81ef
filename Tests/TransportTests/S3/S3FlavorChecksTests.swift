import AetherIO
import Foundation
import Testing

@testable import AetherTransport

/// What each S3 flavor sends and checks, and what the receipt then claims (docs/PROTOCOL.md section 8.5), against
/// a scripted server; and the answers of servers that are not AWS (moto's ListParts root, Ceph's empty ETag).
@Suite struct S3FlavorChecksTests {
    static let bytes = Array("123456789".utf8)
    /// MD5("123456789") (RFC 1321's algorithm; `md5sum` of the nine digits).
    static let md5 = "25f9e794323b453885f5181f1b624d0b"

    static func upload(_ backend: S3Backend, size: Int64 = 9, partSize: Int64 = 9) -> RemoteUpload {
        RemoteUpload(location: backend.objectURL, uploadID: "U", size: size, partSize: partSize)
    }

    static func part(_ bytes: [UInt8] = S3FlavorChecksTests.bytes, index: Int = 0) -> UploadPart {
        UploadPart(
            index: index, offset: Int64(index) * 9, body: .bytes(bytes), length: Int64(bytes.count),
            sha256: SHA256.hash(bytes), crc32c: CRC32C.checksum(bytes))
    }

    @Test func theFlavorOfAnEndpointIsAWSR2OrUnknown() throws {
        #expect(S3Flavor.detect(endpoint: nil) == .aws)
        #expect(S3Flavor.detect(endpoint: .aws(region: "eu-west-1")) == .aws)
        #expect(S3Flavor.detect(endpoint: try S3Endpoint(url: "https://s3.Amazonaws.com", region: "x")) == .aws)
        #expect(S3Flavor.detect(endpoint: .r2(accountID: "abc")) == .r2)
        for url in ["http://127.0.0.1:9000", "https://minio.example", "https://amazonaws.com.example"] {
            #expect(S3Flavor.detect(endpoint: try S3Endpoint(url: url, region: "x")) == .unknown)
        }
        #expect(S3Flavor(rawValue: "ceph") == .ceph)
        #expect(S3Flavor(rawValue: "rgw") == nil)
        #expect(S3Flavor.ceph.capabilities.checksums == [.sha256])
        #expect(S3Flavor.unknown.capabilities.checksums.isEmpty)
        #expect(S3Flavor.minio.capabilities.checksums == [.sha256, .crc32c])
    }

    @Test func theCephFlavorSendsNoCRC32CAndSignsEveryPartEvenWhenAskedForUnsigned() async throws {
        let server = ScriptedS3Transport([
            .init(status: 200, headers: ["ETag": "\"\(Self.md5)\""]),
            .init(status: 200, headers: ["ETag": "\"\(Self.md5)\""]),
        ])
        let backend = try server.backend(flavor: .ceph, payloadSigning: .unsigned)
        let receipt = try await backend.send(Self.part(), to: Self.upload(backend))
        let request = try #require(server.requests.first)
        #expect(request.headers["x-amz-checksum-crc32c"] == nil)
        #expect(request.headers["Content-MD5"] == nil)
        #expect(request.headers["x-amz-content-sha256"] == SHA256.hash(Self.bytes).hex)
        #expect(receipt.checks == [.serverSHA256])
        #expect(receipt.checksumCRC32C == nil)
        // AWS checks the CRC32C, so it may take an unsigned payload; the receipt then claims no SHA-256 check.
        let aws = try server.backend(flavor: .aws, payloadSigning: .unsigned)
        let unsigned = try await aws.send(Self.part(), to: Self.upload(aws))
        #expect(server.requests.last?.headers["x-amz-content-sha256"] == "UNSIGNED-PAYLOAD")
        #expect(unsigned.checks == [.serverCRC32C])
    }

    @Test func anUnknownServerGetsContentMD5AndItsETagIsComparedWithTheMD5() async throws {
        let server = ScriptedS3Transport([
            .init(status: 200, headers: ["ETag": "\"\(Self.md5.uppercased())\""]),
            .init(status: 200, headers: ["ETag": "\"00000000000000000000000000000000\""]),
            .init(status: 200, headers: ["ETag": "\"opaque-tag\"", "x-amz-checksum-crc32c": "4waSgw=="]),
        ])
        let backend = try server.backend(flavor: .unknown, payloadSigning: .unsigned)
        let receipt = try await backend.send(Self.part(), to: Self.upload(backend))
        let request = try #require(server.requests.first)
        #expect(request.headers["Content-MD5"] == Data(try Hex.decode(Self.md5)).base64EncodedString())
        #expect(request.headers["x-amz-checksum-crc32c"] == "4waSgw==")
        #expect(request.headers["x-amz-content-sha256"] == SHA256.hash(Self.bytes).hex)
        // Nothing the server did is known: only the client's comparison counts.
        #expect(receipt.checks == [.clientETagMD5])
        #expect(receipt.checksumCRC32C == nil)
        let error = await #expect(throws: TransportError.self) {
            _ = try await backend.send(Self.part(), to: Self.upload(backend))
        }
        #expect(error?.code == .receiptMismatch)
        #expect(error?.message.contains(Self.md5) == true)
        // An ETag in another form proves nothing; a CRC32C the answer echoes counts as the server's check.
        let echoed = try await backend.send(Self.part(), to: Self.upload(backend))
        #expect(echoed.checks == [.serverCRC32C])
        #expect(echoed.checksumCRC32C == CRC32C.checksum(Self.bytes))
    }

    /// moto 5.2.5 answers ListParts with a `<ListPartsResponse>` root (botocore takes both): refused, a resume
    /// started from zero.
    @Test func listPartsAnsweredWithAListPartsResponseRootIsRead() async throws {
        let server = ScriptedS3Transport([
            .init(
                status: 200,
                body: "<?xml version=\"1.0\"?><ListPartsResponse xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\">"
                    + "<IsTruncated>false</IsTruncated><Part><PartNumber>2</PartNumber><ETag>\"e2\"</ETag>"
                    + "<Size>5242880</Size></Part></ListPartsResponse>")
        ])
        let backend = try server.backend()
        let progress = try await backend.progress(
            of: RemoteUpload(location: backend.objectURL, uploadID: "U", size: 3 * (5 << 20), partSize: 5 << 20))
        #expect(progress == .parts([PartReceipt(index: 1, length: 5 << 20, entityTag: "\"e2\"")]))
    }

    /// Ceph completes with `<ETag></ETag>`: the ETag is asked for with HeadObject, and compared with the MD5 of
    /// the parts' MD5s; the receipt lists every check by whom.
    @Test func anEmptyETagOfTheCompletionIsAskedForAndCompared() async throws {
        let tags = ["\"\(Self.md5)\"", "\"\(Hex.encode(MD5.hash(Array("abcdefghi".utf8))))\""]
        let joined = try Hex.decode(Self.md5) + MD5.hash(Array("abcdefghi".utf8))
        let objectTag = "\"\(Hex.encode(MD5.hash(joined)))-2\""
        let parts = tags.enumerated().map {
            PartReceipt(index: $0.offset, length: 9, entityTag: $0.element, checks: [.serverSHA256])
        }
        let empty = "<CompleteMultipartUploadResult><ETag></ETag></CompleteMultipartUploadResult>"
        let server = ScriptedS3Transport([
            .init(status: 200, body: empty), .init(status: 200, headers: ["ETag": objectTag]),
            .init(status: 200, body: empty), .init(status: 200, headers: ["ETag": "\"\(Self.md5)-2\""]),
        ])
        let backend = try server.backend(flavor: .ceph)
        let upload = Self.upload(backend, size: 18)
        let receipt = try await backend.complete(upload, summary: CompletionSummary(parts: parts, fileSHA256: .zero))
        #expect(server.requests.map(\.method) == ["POST", "HEAD"])
        #expect(receipt.entityTag == objectTag)
        #expect(receipt.checks.map(\.name) == ["part-sha256", "object-etag"])
        #expect(receipt.checks.map(\.party) == [.server, .client])
        #expect(receipt.checks.allSatisfy { $0.parts == 2 && $0.of == 2 })
        let error = await #expect(throws: TransportError.self) {
            _ = try await backend.complete(upload, summary: CompletionSummary(parts: parts, fileSHA256: .zero))
        }
        #expect(error?.code == .receiptMismatch)
    }

    @Test func partsListedWithoutARecordCountAsUnchecked() {
        let parts = [
            PartReceipt(index: 0, length: 1, checks: [.serverSHA256]), PartReceipt(index: 1, length: 1),
            PartReceipt(index: 2, length: 1, checks: [.serverSHA256, .serverCRC32C]),
        ]
        let checks = UploadCheck.tally(parts)
        #expect(checks.map(\.name) == ["part-sha256", "part-crc32c"])
        #expect(checks.map(\.parts) == [2, 1])
        #expect(checks.allSatisfy { $0.of == 3 && $0.party == .server })
    }

    @Test func md5MatchesRFC1321() {
        // RFC 1321 appendix A.5.
        #expect(Hex.encode(MD5.hash([UInt8]())) == "d41d8cd98f00b204e9800998ecf8427e")
        #expect(Hex.encode(MD5.hash(Array("abc".utf8))) == "900150983cd24fb0d6963f7d28e17f72")
        #expect(Hex.encode(MD5.hash(Array("message digest".utf8))) == "f96b697d7cb7938d525a2f31aaf161d0")
    }
}
