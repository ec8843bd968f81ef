import AetherIO
import AetherSecurity
import FoundationEssentials

/// `aether pin CERT.pem...` and `aether pin verify-update PAYLOAD.json --key PUB.pem`.
enum PinCommand: CLICommand {
    static let name = "pin"
    static let summary = "print certificate SPKI pins, or check a signed pin update"
    static let usage = """
        usage: aether pin CERT.pem...
               aether pin verify-update PAYLOAD.json --key PUB.pem

          CERT.pem...    prints the SPKI pin (SHA-256 of the SubjectPublicKeyInfo DER) of every certificate in
                         each PEM file: base64, the HPKP pin-sha256 form, and hex
          verify-update  checks a pin update (docs/UPLOAD-SECURITY.md): its form, that it names PUB.pem's key id,
                         its RSA-PSS/SHA-256 signature by PUB.pem (RSA, 4096 bits or more), and that it has not
                         expired. Exit 0 when valid, 1 with the reason when not.
        """

    static func run(_ arguments: [Word]) async throws -> Int32 {
        if arguments.first?.text == "verify-update" {
            return try verifyUpdate(Array(arguments.dropFirst()))
        }
        let parsed = try Arguments(arguments, positionals: 0...Int.max)
        guard !parsed.positionals.isEmpty else { throw Arguments.UsageError(description: "expected CERT.pem...") }
        for path in parsed.positionals {
            let pins = try SPKIPin.pins(certificatesPEM: read(path.path))
            for (index, pin) in pins.enumerated() {
                print("\(TerminalText.safe("\(path)"))[\(index)]")
                print("  base64  \(pin.base64)")
                print("  hpkp    pin-sha256=\"\(pin.base64)\"")
                print("  hex     \(pin.hex)")
            }
        }
        return ExitStatus.success
    }

    private static func verifyUpdate(_ arguments: [Word]) throws -> Int32 {
        let parsed = try Arguments(arguments, options: ["key"], positionals: 1...1)
        let paths = try parsed.positionals(exactly: 1, names: "PAYLOAD.json")
        guard let keyPath = parsed.path("key") else {
            throw Arguments.UsageError(description: "--key PUB.pem is required")
        }
        let key = try PinSigningKey(pem: String(decoding: read(keyPath), as: UTF8.self))
        let json = try read(paths[0].path)
        let payload: PinUpdatePayload
        do {
            payload = try PinUpdatePayload(json: json)
        } catch {
            print("invalid: \(error.message)")
            return ExitStatus.failure
        }
        guard payload.signingKeyID == key.id else {
            print("invalid: the update names signing key \(payload.signingKeyID), but \(keyPath) is \(key.id)")
            return ExitStatus.failure
        }
        guard key.verifies(payload) else {
            print("invalid: the RSA-PSS signature does not verify with \(keyPath)")
            return ExitStatus.failure
        }
        let now = Date()
        guard now < payload.expiryDate else {
            print("invalid: the update expired at \(payload.expiryDate)")
            return ExitStatus.failure
        }
        print("valid: signed by \(key.id)")
        print("  effective \(payload.effectiveDate)\(now < payload.effectiveDate ? " (not yet)" : "")")
        print("  expires   \(payload.expiryDate)")
        for pin in payload.newCAPins { print("  ca pin    \(pin.base64)") }
        return ExitStatus.success
    }

    /// Certificates, keys and payloads are small: more than 1 MiB is refused before it is read.
    static let maximumInputBytes = 1 << 20

    // A regular file only (a FIFO or device is an error, never a hang), read under the TOCTOU guard.
    private static func read(_ path: FilePath) throws -> [UInt8] {
        try GuardedFile(path: path).readAll(maximumBytes: maximumInputBytes)
    }
}
