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

    static func run(_ arguments: [String]) async throws -> Int32 {
        if arguments.first == "verify-update" {
            return try verifyUpdate(Array(arguments.dropFirst()))
        }
        let parsed = try Arguments(arguments)
        guard !parsed.positionals.isEmpty else { throw Arguments.UsageError(description: "expected CERT.pem...") }
        for path in parsed.positionals {
            let pins = try SPKIPin.pins(certificatesPEM: read(path))
            for (index, pin) in pins.enumerated() {
                print("\(path)[\(index)]")
                print("  base64  \(pin.base64)")
                print("  hpkp    pin-sha256=\"\(pin.base64)\"")
                print("  hex     \(pin.hex)")
            }
        }
        return ExitStatus.success
    }

    private static func verifyUpdate(_ arguments: [String]) throws -> Int32 {
        let parsed = try Arguments(arguments, options: ["key"])
        let paths = try parsed.positionals(exactly: 1, names: "PAYLOAD.json")
        guard let keyPath = parsed.option("key") else {
            throw Arguments.UsageError(description: "--key PUB.pem is required")
        }
        let key = try PinSigningKey(pem: String(decoding: read(keyPath), as: UTF8.self))
        let json = try read(paths[0])
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

    private static func read(_ path: String) throws -> [UInt8] {
        do {
            return Array(try Data(contentsOf: URL(filePath: path)))
        } catch {
            throw SecurityError(.systemCall, "cannot read \(path)")
        }
    }
}
