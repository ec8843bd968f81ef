import AetherIO
import Foundation
import Testing

@testable import AetherTransport

@Suite struct S3SigV4SignerTests {
    struct VectorFile: Decodable {
        struct Vector: Decodable, CustomTestStringConvertible {
            let name: String
            let accessKeyID: String
            let secretAccessKey: String
            let sessionToken: String?
            let region: String
            let service: String
            let normalize: Bool
            let signBody: Bool
            let omitSessionToken: Bool
            let timestamp: String
            let request: String
            let canonicalRequest: String
            let stringToSign: String
            let signature: String
            let signedRequest: String
            var testDescription: String { name }
        }
        let count: Int
        let vectors: [Vector]
    }

    static let path = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent(
            "Vectors/sigv4-aws-c-auth.json")

    static let file: VectorFile? = try? JSONDecoder().decode(VectorFile.self, from: Data(contentsOf: path))

    /// The raw request of a vector (`request.txt`): request line, headers (folded lines joined by a space), body.
    struct RawRequest {
        var method = ""
        var path = ""
        var query: [(name: String, value: String)] = []
        var host = ""
        var headers = HTTPHeaders()
        var body: [UInt8] = []

        init(_ text: String) throws {
            let (head, body) =
                text.range(of: "\n\n").map { (String(text[..<$0.lowerBound]), String(text[$0.upperBound...])) }
                ?? (text, "")
            self.body = Array(body.utf8)
            var lines = head.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
            let requestLine = lines.removeFirst()
            let space = try #require(requestLine.firstIndex(of: " "))
            method = String(requestLine[..<space])
            var target = String(requestLine[requestLine.index(after: space)...])
            #expect(target.hasSuffix(" HTTP/1.1"))
            target.removeLast(" HTTP/1.1".count)
            if let mark = target.firstIndex(of: "?") {
                for item in target[target.index(after: mark)...].split(separator: "&") {
                    let pair = item.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
                    query.append(
                        (
                            try Self.decode(String(pair[0])),
                            pair.count > 1 ? try Self.decode(String(pair[1])) : ""
                        ))
                }
                target = String(target[..<mark])
            }
            path = try Self.decode(target)
            var fields: [(String, String)] = []
            for line in lines where !line.isEmpty {
                if line.first == " " || line.first == "\t" {
                    let last = fields.removeLast()
                    fields.append((last.0, last.1 + " " + line.trimmingCharacters(in: .whitespaces)))
                    continue
                }
                let colon = try #require(line.firstIndex(of: ":"))
                fields.append((String(line[..<colon]), String(line[line.index(after: colon)...])))
            }
            for (name, value) in fields {
                if name.lowercased() == "host" { host = value } else { headers.add(name, value) }
            }
        }

        static func decode(_ text: String) throws -> String {
            try #require(text.removingPercentEncoding)
        }
    }

    static func seconds(_ timestamp: String) throws -> Int64 {
        let formatter = ISO8601DateFormatter()
        return Int64(try #require(formatter.date(from: timestamp)).timeIntervalSince1970)
    }

    @Test func theVectorFileHoldsEveryCase() throws {
        let file = try #require(Self.file)
        #expect(file.vectors.count == file.count)
        #expect(file.count == 38)
    }

    @Test(arguments: file?.vectors ?? [])
    func signsLikeTheAWSTestSuite(_ vector: VectorFile.Vector) throws {
        let request = try RawRequest(vector.request)
        let credentials = try S3Credentials(
            accessKeyID: vector.accessKeyID, secretAccessKey: vector.secretAccessKey,
            sessionToken: vector.sessionToken)
        let signer = S3SigV4Signer(
            credentials: credentials, region: vector.region, service: vector.service,
            normalizePath: vector.normalize)
        let signature = try signer.sign(
            S3SigV4Signer.Request(
                method: request.method, host: request.host, path: request.path, query: request.query,
                headers: request.headers),
            payload: .sha256(SHA256.hash(request.body)), at: try Self.seconds(vector.timestamp),
            contentHashHeader: vector.signBody, signSessionToken: !vector.omitSessionToken)
        #expect(signature.canonicalRequest == vector.canonicalRequest)
        #expect(signature.stringToSign == vector.stringToSign)
        #expect(signature.signature == vector.signature)
        let authorization = try #require(
            vector.signedRequest.split(separator: "\n").first { $0.hasPrefix("Authorization:") })
        #expect(signature.headers["Authorization"] == String(authorization.dropFirst("Authorization:".count)))
        #expect(signature.headers["X-Amz-Security-Token"] == vector.sessionToken)
    }

    @Test func unsignedPayloadIsNamedInTheCanonicalRequestAndHeader() throws {
        let signer = S3SigV4Signer(
            credentials: try S3Credentials(accessKeyID: "AKIDEXAMPLE", secretAccessKey: "secret"),
            region: "us-east-1")
        let request = S3SigV4Signer.Request(
            method: "PUT", host: "bucket.s3.amazonaws.com", path: "/a b/c+d.bin",
            query: [("uploadId", "x/y"), ("partNumber", "1")])
        let signature = try signer.sign(request, payload: .unsigned, at: 1_440_938_160)
        #expect(signature.headers["x-amz-content-sha256"] == "UNSIGNED-PAYLOAD")
        #expect(
            signature.canonicalRequest
                == "PUT\n/a%20b/c%2Bd.bin\npartNumber=1&uploadId=x%2Fy\nhost:bucket.s3.amazonaws.com\n"
                + "x-amz-content-sha256:UNSIGNED-PAYLOAD\nx-amz-date:20150830T123600Z\n\n"
                + "host;x-amz-content-sha256;x-amz-date\nUNSIGNED-PAYLOAD")
        let other = try S3SigV4Signer(
            credentials: try S3Credentials(accessKeyID: "AKIDEXAMPLE", secretAccessKey: "secreT"),
            region: "us-east-1"
        ).sign(request, payload: .unsigned, at: 1_440_938_160)
        #expect(other.signature != signature.signature)
        #expect(other.canonicalRequest == signature.canonicalRequest)
    }

    @Test(arguments: [
        (Int64(0), "19700101T000000Z"), (951_782_400, "20000229T000000Z"), (1_440_938_160, "20150830T123600Z"),
        (4_102_444_799, "20991231T235959Z"),
    ])
    func timestampsAreUTCCalendarDates(_ seconds: Int64, _ expected: String) {
        #expect(SigV4Timestamp(secondsSince1970: seconds).dateTime == expected)
        #expect(SigV4Timestamp(secondsSince1970: seconds).date == String(expected.prefix(8)))
    }

    @Test func descriptionsNeverShowTheSecretOrToken() throws {
        let credentials = try S3Credentials(
            accessKeyID: "AKIDEXAMPLE", secretAccessKey: "wJalrXUtnFEMI/K7MDENG", sessionToken: "TOKEN-123")
        for text in [credentials.description, credentials.debugDescription, "\(credentials)"] {
            #expect(text.contains("AKIDEXAMPLE"))
            #expect(!text.contains("wJalrXUtnFEMI"))
            #expect(!text.contains("TOKEN-123"))
        }
    }

    @Test func malformedCredentialsAreRefusedWithoutEchoingThem() {
        #expect(throws: TransportError.self) { try S3Credentials(accessKeyID: "", secretAccessKey: "s") }
        do {
            _ = try S3Credentials(accessKeyID: "AKID", secretAccessKey: "bad\nsecret")
            Issue.record("a secret with a newline was accepted")
        } catch {
            #expect(error.code == .credentialsUnavailable)
            #expect(!error.message.contains("bad"))
        }
    }
}
