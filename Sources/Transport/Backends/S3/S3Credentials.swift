public import AetherIO

/// An AWS access key pair and, for temporary credentials, a session token. The secret and the token are kept in
/// `SecureBytes` (wiped when released) and never printed: `description` shows only the access key id.
public struct S3Credentials: Sendable, CustomStringConvertible, CustomDebugStringConvertible {
    /// The access key id (`AKIA...`); not a secret, it names the key in logs and errors.
    public let accessKeyID: String
    /// The secret access key.
    let secretAccessKey: SecureBytes
    /// The session token of temporary credentials (`x-amz-security-token`), if any.
    let sessionToken: SecureBytes?

    /// Credentials from their parts; throws `.credentialsUnavailable` when a part is empty or holds a control
    /// character (it could not be sent in a header).
    public init(accessKeyID: String, secretAccessKey: SecureBytes, sessionToken: SecureBytes? = nil)
        throws(TransportError)
    {
        guard !accessKeyID.isEmpty, accessKeyID.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) else {
            throw TransportError(.credentialsUnavailable, "the access key id is empty or has spaces or control bytes")
        }
        let printable: (UnsafeRawBufferPointer) -> Bool = { bytes in unsafe bytes.allSatisfy { $0 > 0x20 && $0 < 0x7F }
        }
        guard secretAccessKey.count > 0, unsafe secretAccessKey.withUnsafeBytes(printable) else {
            throw TransportError(
                .credentialsUnavailable, "the secret access key of \(accessKeyID) is empty or has control bytes")
        }
        if let sessionToken, sessionToken.count == 0 || !(unsafe sessionToken.withUnsafeBytes(printable)) {
            throw TransportError(
                .credentialsUnavailable, "the session token of \(accessKeyID) is empty or has control bytes")
        }
        self.accessKeyID = accessKeyID
        self.secretAccessKey = secretAccessKey
        self.sessionToken = sessionToken
    }

    /// Credentials from strings (tests, configuration files already in memory).
    public init(accessKeyID: String, secretAccessKey: String, sessionToken: String? = nil) throws(TransportError) {
        try self.init(
            accessKeyID: accessKeyID, secretAccessKey: SecureBytes(copying: secretAccessKey.utf8),
            sessionToken: sessionToken.map { SecureBytes(copying: $0.utf8) })
    }

    /// True for temporary credentials (with a session token).
    public var hasSessionToken: Bool { sessionToken != nil }

    public var description: String {
        "S3Credentials(accessKeyID: \(accessKeyID), secretAccessKey: <redacted>"
            + (sessionToken == nil ? ")" : ", sessionToken: <redacted>)")
    }
    public var debugDescription: String { description }

    /// The session token as a header value (only ever placed in `x-amz-security-token`).
    var sessionTokenHeaderValue: String? {
        unsafe sessionToken?.withUnsafeBytes { unsafe String(decoding: $0, as: UTF8.self) }
    }
}
