import AetherIO
import AetherTestSupport
import Foundation
import Synchronization
import Testing

@testable import AetherSecurity

#if canImport(Glibc)
    import Glibc
#endif

extension ManualClock {
    /// A manual clock whose wall reading is `date`.
    convenience init(_ date: Date) { self.init(wall: .seconds(date.timeIntervalSince1970)) }
}

/// Runs the `openssl` command line found on PATH.
enum OpenSSLTool {
    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    static let executable: URL? = {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? ""
        for directory in path.split(separator: ":") {
            let candidate = URL(fileURLWithPath: String(directory)).appendingPathComponent("openssl")
            if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
        }
        return nil
    }()

    /// Runs `openssl arguments...` in `directory` and fails on a non-zero exit.
    static func run(_ arguments: [String], in directory: URL) throws {
        guard let executable else { throw Failure(description: "openssl is not on PATH") }
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        process.currentDirectoryURL = directory
        process.standardOutput = FileHandle.nullDevice
        let errors = Pipe()
        process.standardError = errors
        try process.run()
        let message = errors.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw Failure(
                description: "openssl \(arguments.joined(separator: " ")): \(String(decoding: message, as: UTF8.self))")
        }
    }
}

/// A PKI made at test time with the openssl command line: one root CA, two intermediates (A and B), a leaf under
/// each (CN and SAN localhost / 127.0.0.1), and an RSA-4096 pin-signing key. Made once per test process.
final class TestPKI: Sendable {
    let directory: URL

    static let shared: Result<TestPKI, any Error> = Result {
        let pki = try TestPKI()
        // The keys are throwaway, but they should not outlive the test process.
        atexit { try? FileManager.default.removeItem(at: TestPKI.cleanupDirectory) }
        return pki
    }

    /// Where the PKI lives, for the exit handler (a C function pointer cannot capture it).
    static let cleanupDirectory = FileManager.default.temporaryDirectory.appendingPathComponent(
        "aether-pki-\(getpid())-\(UUID().uuidString)")

    static func get() throws -> TestPKI { try shared.get() }

    private init() throws {
        directory = Self.cleanupDirectory
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let caExtensions = "basicConstraints=critical,CA:TRUE\nkeyUsage=critical,keyCertSign,cRLSign\n"
        let leafExtensions =
            "basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature\nextendedKeyUsage=serverAuth\n"
            + "subjectAltName=DNS:localhost,IP:127.0.0.1\n"
        try caExtensions.write(to: directory.appendingPathComponent("ca.ext"), atomically: true, encoding: .utf8)
        try leafExtensions.write(to: directory.appendingPathComponent("leaf.ext"), atomically: true, encoding: .utf8)
        let ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes"]
        try OpenSSLTool.run(
            ["req", "-x509"] + ec + [
                "-keyout", "root.key", "-out", "root.pem", "-days", "2", "-subj", "/CN=Aether Test Root",
                "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign,cRLSign",
            ], in: directory)
        for (name, issuer, extensions, subject) in [
            ("intA", "root", "ca.ext", "/CN=Aether Test Intermediate A"),
            ("intB", "root", "ca.ext", "/CN=Aether Test Intermediate B"),
            ("leafA", "intA", "leaf.ext", "/CN=localhost"),
            ("leafB", "intB", "leaf.ext", "/CN=localhost"),
        ] {
            try OpenSSLTool.run(
                ["req", "-new"] + ec + ["-keyout", "\(name).key", "-out", "\(name).csr", "-subj", subject],
                in: directory)
            try OpenSSLTool.run(
                [
                    "x509", "-req", "-in", "\(name).csr", "-CA", "\(issuer).pem", "-CAkey", "\(issuer).key",
                    "-CAcreateserial", "-out", "\(name).pem", "-days", "2", "-extfile", extensions,
                ], in: directory)
        }
        for name in ["root", "intA", "intB", "leafA", "leafB"] {
            try OpenSSLTool.run(
                ["x509", "-in", "\(name).pem", "-outform", "DER", "-out", "\(name).der"], in: directory)
            // The expected pin, computed by openssl alone: SHA-256 of the SPKI DER.
            try OpenSSLTool.run(
                ["x509", "-in", "\(name).pem", "-pubkey", "-noout", "-out", "\(name).pub.pem"], in: directory)
            try OpenSSLTool.run(
                ["pkey", "-pubin", "-in", "\(name).pub.pem", "-outform", "DER", "-out", "\(name).spki"], in: directory)
            try OpenSSLTool.run(
                ["dgst", "-sha256", "-binary", "-out", "\(name).pin", "\(name).spki"], in: directory)
        }
        try OpenSSLTool.run(
            ["genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:4096", "-out", "signer.key"], in: directory)
        try OpenSSLTool.run(["pkey", "-in", "signer.key", "-pubout", "-out", "signer.pub"], in: directory)
        try OpenSSLTool.run(
            ["genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048", "-out", "small.key"], in: directory)
        try OpenSSLTool.run(["pkey", "-in", "small.key", "-pubout", "-out", "small.pub"], in: directory)
    }

    func url(_ name: String) -> URL { directory.appendingPathComponent(name) }

    func bytes(_ name: String) throws -> [UInt8] { Array(try Data(contentsOf: url(name))) }

    func text(_ name: String) throws -> String { try String(contentsOf: url(name), encoding: .utf8) }

    /// The DER certificate `name` (root, intA, intB, leafA, leafB).
    func der(_ name: String) throws -> [UInt8] { try bytes("\(name).der") }

    /// The pin of certificate `name` as openssl computed it.
    func pin(_ name: String) throws -> SPKIPin { SPKIPin(digest: try Digest32(bytes: bytes("\(name).pin"))) }

    /// The trusted RSA-4096 pin-signing key.
    func signingKey() throws -> PinSigningKey { try PinSigningKey(pem: text("signer.pub")) }

    /// Signs `message` with RSA-PSS / SHA-256 / 32-byte salt using the openssl command line and `keyFile`.
    func sign(_ message: [UInt8], keyFile: String = "signer.key") throws -> [UInt8] {
        let name = UUID().uuidString
        try Data(message).write(to: url("\(name).msg"))
        try OpenSSLTool.run(
            [
                "dgst", "-sha256", "-sigopt", "rsa_padding_mode:pss", "-sigopt", "rsa_pss_saltlen:32", "-sign",
                keyFile, "-out", "\(name).sig", "\(name).msg",
            ], in: directory)
        return try bytes("\(name).sig")
    }

    /// A pin update for `pins`, signed with `keyFile`, naming `keyID` (the trusted key's id by default).
    func update(
        pins: [SPKIPin], effective: Date, expiry: Date, keyID: String? = nil, keyFile: String = "signer.key"
    ) throws -> PinUpdatePayload {
        let id = try keyID ?? signingKey().id
        let message = PinUpdatePayload.signedBytes(
            newCAPins: pins, effectiveSeconds: Int64(effective.timeIntervalSince1970),
            expirySeconds: Int64(expiry.timeIntervalSince1970), signingKeyID: id)
        return try PinUpdatePayload(
            newCAPins: pins, effectiveDate: effective, expiryDate: expiry, signingKeyID: id,
            signature: sign(message, keyFile: keyFile))
    }
}
