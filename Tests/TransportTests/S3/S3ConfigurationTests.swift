import Foundation
import Testing

@testable import AetherTransport

/// Destinations, endpoints and addressing, flavors' limits, the retry policy, and the credential chain over the
/// environment and the shared credentials/config files.
@Suite struct S3ConfigurationTests {
    @Test func s3URLsParseIntoBucketAndKey() throws {
        let destination = try S3Destination(parsing: "s3://my-bucket.logs/a/b c/ü.bin")
        #expect(destination.bucket == "my-bucket.logs")
        #expect(destination.key == "a/b c/ü.bin")
        #expect(destination.description == "s3://my-bucket.logs/a/b c/ü.bin")
    }

    @Test(arguments: [
        "http://bucket/key", "s3://bucket", "s3://bucket/", "s3://ab/key", "s3://Bucket/key", "s3://-bucket/key",
        "s3://bucket-/key", "s3://bu..cket/key", "s3://bucket/a/../b", "s3://bucket/./b", "s3://bucket/a\nb",
        "s3://" + String(repeating: "b", count: 64) + "/k", "s3://bucket/" + String(repeating: "k", count: 1025),
    ])
    func malformedDestinationsAreRefused(_ text: String) {
        #expect(throws: TransportError.self) { try S3Destination(parsing: text) }
    }

    @Test func pathStyleAndVirtualHostURLsEncodeTheKeyOnce() throws {
        let destination = try S3Destination(bucket: "bucket", key: "dir/a b+c~.bin")
        let path = try S3Endpoint(url: "http://127.0.0.1:9000/", region: "us-east-1")
        #expect(path.url(for: destination, query: []) == "http://127.0.0.1:9000/bucket/dir/a%20b%2Bc~.bin")
        #expect(path.authority(bucket: "bucket") == "127.0.0.1:9000")
        let aws = S3Endpoint.aws(region: "eu-west-1")
        #expect(
            aws.url(for: destination, query: [("uploadId", "a=b")])
                == "https://bucket.s3.eu-west-1.amazonaws.com/dir/a%20b%2Bc~.bin?uploadId=a%3Db")
        #expect(aws.path(of: destination) == "/dir/a b+c~.bin")
        let explicitPort = try S3Endpoint(url: "https://minio.local:443", region: "us-east-1", addressing: .virtualHost)
        #expect(explicitPort.authority(bucket: "b") == "b.minio.local")
        #expect(S3Endpoint.r2(accountID: "acc").region == "auto")
    }

    @Test func aDottedBucketCannotBeAVirtualHostOverTLS() throws {
        let destination = try S3Destination(bucket: "my.bucket", key: "k")
        #expect(throws: TransportError.self) { try S3Endpoint.aws(region: "us-east-1").validate(destination) }
        try S3Endpoint(url: "https://s3.example", region: "r").validate(destination)
    }

    @Test(arguments: [
        "ftp://host", "http://", "http://host/path", "http://user@host", "http://host:0", "http://host:70000",
    ])
    func malformedEndpointsAreRefused(_ url: String) {
        #expect(throws: TransportError.self) { try S3Endpoint(url: url, region: "us-east-1") }
    }

    @Test func flavorsCarryTheirProvidersLimits() {
        let aws = S3Flavor.aws.capabilities
        #expect(aws.minimumPartSize == 5 * 1024 * 1024)
        #expect(aws.maximumPartSize == 5 * 1024 * 1024 * 1024)
        #expect(aws.maximumParts == 10_000)
        #expect(aws.maximumObjectSize == 5 * 1024 * 1024 * 1024 * 1024)
        #expect(!aws.equalParts && aws.parallelParts && aws.outOfOrderParts)
        #expect(aws.checksums.contains(.crc32c))
        #expect(aws.resumeQuery == .parts)
        #expect(S3Flavor.r2.capabilities.equalParts)
        #expect(!S3Flavor.minio.capabilities.equalParts)
        #expect(S3Flavor.ceph.capabilities.maximumParts == 10_000)
    }

    @Test func aHugeObjectGetsPartsLargeEnoughForTenThousand() throws {
        let layout = try PartLayout(
            objectSize: 1 << 40, preferred: 8 << 20, capabilities: S3Flavor.aws.capabilities)
        #expect(layout.partCount <= 10_000)
        #expect(layout.partSize >= 5 << 20)
    }

    @Test func backOffIsFullJitterUnderACappedExponential() {
        let policy = S3RetryPolicy(maximumAttempts: 10, baseDelay: .milliseconds(100), maximumDelay: .seconds(1))
        #expect(policy.delay(beforeRetry: 1, unit: 0.999) < .milliseconds(100))
        #expect(policy.delay(beforeRetry: 3, unit: 0.5) == .milliseconds(200))
        #expect(policy.delay(beforeRetry: 9, unit: 1) == .seconds(1))
        #expect(policy.delay(beforeRetry: 60, unit: 0.5) == .milliseconds(500))
        #expect(policy.delay(beforeRetry: 2, unit: 0) == .zero)
        #expect(S3RetryPolicy(maximumAttempts: 0).maximumAttempts == 1)
    }

    // MARK: Credentials

    final class Files {
        let directory: URL
        init() throws {
            directory = FileManager.default.temporaryDirectory.appendingPathComponent("aether-s3-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        }
        deinit { try? FileManager.default.removeItem(at: directory) }
        func write(_ name: String, _ text: String) throws -> String {
            let url = directory.appendingPathComponent(name)
            try Data(text.utf8).write(to: url)
            return url.path
        }
    }

    static let credentialsFile = """
        # comment
        [default]
        aws_access_key_id = AKIDDEFAULT
        aws_secret_access_key = secret-default

        [work]
        aws_access_key_id=AKIDWORK
        aws_secret_access_key=secret-work
        aws_session_token = token-work
        s3 =
          max_concurrent_requests = 20
        """

    static let configFile = """
        [default]
        region = eu-central-1
        [profile cfg]
        ; only in the config file
        aws_access_key_id = AKIDCONFIG
        aws_secret_access_key = secret-config
        region = ap-south-1
        """

    @Test func theEnvironmentComesFirst() throws {
        let chain = S3CredentialChain(environment: [
            "AWS_ACCESS_KEY_ID": "AKIDENV", "AWS_SECRET_ACCESS_KEY": "secret-env", "AWS_SESSION_TOKEN": "tok",
            "AWS_SHARED_CREDENTIALS_FILE": "/nonexistent/credentials", "AWS_REGION": "us-west-2",
        ])
        let credentials = try chain.credentials()
        #expect(credentials.accessKeyID == "AKIDENV")
        #expect(credentials.hasSessionToken)
        #expect(credentials.sessionTokenHeaderValue == "tok")
        #expect(try chain.region() == "us-west-2")
    }

    @Test func profilesComeFromTheSharedFiles() throws {
        let files = try Files()
        let credentials = try files.write("credentials", Self.credentialsFile)
        let config = try files.write("config", Self.configFile)
        let base = ["AWS_SHARED_CREDENTIALS_FILE": credentials, "AWS_CONFIG_FILE": config]
        let standard = S3CredentialChain(environment: base)
        #expect(try standard.credentials().accessKeyID == "AKIDDEFAULT")
        #expect(try !standard.credentials().hasSessionToken)
        #expect(try standard.region() == "eu-central-1")

        var withProfile = base
        withProfile["AWS_PROFILE"] = "work"
        let work = try S3CredentialChain(environment: withProfile).credentials()
        #expect(work.accessKeyID == "AKIDWORK")
        #expect(work.sessionTokenHeaderValue == "token-work")

        let fromConfig = S3CredentialChain(environment: base, profile: "cfg")
        #expect(try fromConfig.credentials().accessKeyID == "AKIDCONFIG")
        #expect(try fromConfig.region() == "ap-south-1")

        // An explicit profile wins over AWS_PROFILE and over keys in the environment.
        var everything = withProfile
        everything["AWS_ACCESS_KEY_ID"] = "AKIDENV"
        everything["AWS_SECRET_ACCESS_KEY"] = "secret-env"
        #expect(
            try S3CredentialChain(environment: everything, profile: "default").credentials().accessKeyID
                == "AKIDDEFAULT")
    }

    @Test func theHomeDirectoryFilesAreTheDefault() throws {
        let files = try Files()
        try FileManager.default.createDirectory(
            at: files.directory.appendingPathComponent(".aws"), withIntermediateDirectories: true)
        _ = try files.write(".aws/credentials", Self.credentialsFile)
        let chain = S3CredentialChain(environment: ["HOME": files.directory.path])
        #expect(try chain.credentials().accessKeyID == "AKIDDEFAULT")
    }

    @Test func missingOrHalfConfiguredCredentialsAreTypedErrorsWithoutValues() throws {
        let files = try Files()
        let half = try files.write("half", "[default]\naws_access_key_id = AKIDHALF\n")
        let cases: [[String: String]] = [
            ["AWS_SHARED_CREDENTIALS_FILE": "/nonexistent/a", "AWS_CONFIG_FILE": "/nonexistent/b"],
            ["AWS_ACCESS_KEY_ID": "AKIDONLY", "AWS_CONFIG_FILE": "/nonexistent/b"],
            ["AWS_SECRET_ACCESS_KEY": "only-the-secret", "AWS_CONFIG_FILE": "/nonexistent/b"],
            ["AWS_SHARED_CREDENTIALS_FILE": half, "AWS_CONFIG_FILE": "/nonexistent/b"],
            ["AWS_SHARED_CREDENTIALS_FILE": files.directory.path],
        ]
        for environment in cases {
            do {
                _ = try S3CredentialChain(environment: environment).credentials()
                Issue.record("credentials from \(environment.keys.sorted())")
            } catch {
                #expect(error.code == .credentialsUnavailable)
                #expect(!error.message.contains("only-the-secret"))
            }
        }
        var unknown = ["AWS_SHARED_CREDENTIALS_FILE": half]
        unknown["AWS_PROFILE"] = "nobody"
        #expect(throws: TransportError.self) { try S3CredentialChain(environment: unknown).credentials() }
    }

    @Test func theINIDialectKeepsSectionsAndSkipsNestedBlocks() {
        let sections = S3CredentialChain.parseINI(Self.credentialsFile + "\r\n[  profile   spaced ]\r\nregion = x\r\n")
        #expect(sections["work"]?["aws_session_token"] == "token-work")
        #expect(sections["work"]?["max_concurrent_requests"] == nil)
        #expect(sections["profile spaced"]?["region"] == "x")
    }
}
