/// A minimal TLS client on libssl with the pin manager as its certificate verification: it connects,
/// completes the handshake and closes. It proves the callback that the HTTP client installs, and probes
/// a server's pins from the command line.
public enum PinnedTLSClient {
    /// Connects to `host:port`, checks the chain against the system trust store (or `trustAnchorsFile`, a PEM
    /// bundle), the host name `serverName`, and then `manager`'s pins. Returns the negotiated protocol version.
    /// Throws `.pinMismatch` when the chain is valid but no pin matches, `.authenticationFailed` when the chain
    /// itself is rejected, `.systemCall` when no handshake happens. Blocking and without a timeout: meant for
    /// tests and probes, not for the upload path (which runs libcurl with the same verification).
    public static func handshake(
        host: String, port: UInt16, serverName: String, trustAnchorsFile: String? = nil,
        manager: CertificatePinManager
    ) throws(SecurityError) -> String {
        let outcome = OpenSSL.handshake(
            address: "\(host):\(port)", serverName: serverName, trustAnchorsFile: trustAnchorsFile, manager: manager)
        switch outcome {
        case .connected(let version): return version
        case .pinRejected: throw SecurityError(.pinMismatch, "no certificate pin matches the server's chain")
        case .chainRejected(let reason):
            throw SecurityError(.authenticationFailed, "the server's certificate chain is invalid: \(reason)")
        case .failed(let reason): throw SecurityError(.systemCall, reason)
        }
    }
}
