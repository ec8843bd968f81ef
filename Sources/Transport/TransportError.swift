/// The one error type of AetherTransport: a code callers compare, a message for people, and where it was thrown.
///
/// Messages never carry key material or file contents.
public struct TransportError: Error, Sendable, CustomStringConvertible {
    /// What went wrong, as a value callers can compare. New codes do not break callers.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Base: Hashable, Sendable {
            case timedOut, refused, protocolViolation, systemCall, invalidArgument, notConnected, unknownKey
            case cancelled, hostNotFound, connectionRefused, connectionClosed, tlsHandshakeFailed
            case certificateRejected, pinMismatch, headerTooLarge, responseTooLarge, bodySourceFailed
            case credentialsUnavailable, accessDenied, remoteRejected, gone, throttled, serverFailed
            case conflict, versionUnsupported, tooLarge, checksumMismatch, protocolUnsupported
            case verificationFailed, receiptMismatch
        }
        private let base: Base
        private init(_ base: Base) { self.base = base }
        /// No answer within the retry window.
        public static let timedOut = Code(.timedOut)
        /// The peer refused the request.
        public static let refused = Code(.refused)
        /// The peer broke the protocol.
        public static let protocolViolation = Code(.protocolViolation)
        /// A socket call failed.
        public static let systemCall = Code(.systemCall)
        /// An argument is outside its documented range.
        public static let invalidArgument = Code(.invalidArgument)
        /// No session is live.
        public static let notConnected = Code(.notConnected)
        /// No paired key for the host (or the key id is unknown).
        public static let unknownKey = Code(.unknownKey)
        /// The caller cancelled the request (task cancellation) or the client shut down under it.
        public static let cancelled = Code(.cancelled)
        /// The host name (or the proxy's) did not resolve.
        public static let hostNotFound = Code(.hostNotFound)
        /// No TCP connection could be made (refused, unreachable).
        public static let connectionRefused = Code(.connectionRefused)
        /// The peer closed the connection before the exchange was complete (mid-body, or with nothing sent).
        public static let connectionClosed = Code(.connectionClosed)
        /// The TLS handshake failed for a reason other than the certificate (protocol version, alert, ...).
        public static let tlsHandshakeFailed = Code(.tlsHandshakeFailed)
        /// The server's certificate chain is invalid: untrusted, expired, or for another name.
        public static let certificateRejected = Code(.certificateRejected)
        /// The chain is valid but no configured pin matches it.
        public static let pinMismatch = Code(.pinMismatch)
        /// The response's header section is larger than the configured limit (or libcurl's).
        public static let headerTooLarge = Code(.headerTooLarge)
        /// The response body is larger than the request's limit.
        public static let responseTooLarge = Code(.responseTooLarge)
        /// The request body's source ended early, overran its declared length, or was aborted.
        public static let bodySourceFailed = Code(.bodySourceFailed)
        /// No credentials were found (environment, shared files) or they are malformed.
        public static let credentialsUnavailable = Code(.credentialsUnavailable)
        /// The destination refused the credentials or the signature (S3 `AccessDenied`, `SignatureDoesNotMatch`,
        /// `InvalidAccessKeyId`, HTTP 401/403).
        public static let accessDenied = Code(.accessDenied)
        /// The destination refused the request itself (S3 `EntityTooSmall`, `InvalidPart`, any other 4xx).
        public static let remoteRejected = Code(.remoteRejected)
        /// The upload or its container no longer exists (S3 `NoSuchUpload`, `NoSuchBucket`, HTTP 404/410).
        public static let gone = Code(.gone)
        /// The destination kept asking to slow down (S3 `SlowDown`, HTTP 503/429) after the bounded retries.
        public static let throttled = Code(.throttled)
        /// The destination kept failing (HTTP 500, S3 `InternalError`) after the bounded retries.
        public static let serverFailed = Code(.serverFailed)
        /// The destination holds another offset than the request assumed and it cannot be reconciled (HTTP 409).
        public static let conflict = Code(.conflict)
        /// The destination does not speak the protocol version the client does (tus 412, no common version).
        public static let versionUnsupported = Code(.versionUnsupported)
        /// The upload is larger than the destination accepts (HTTP 413, tus `Tus-Max-Size`).
        public static let tooLarge = Code(.tooLarge)
        /// The destination found that the bytes it received differ from the checksum sent with them and refused them
        /// (native 422, tus 460, S3 `BadDigest`): damage in transit that the destination caught. Sending the bytes
        /// again is the cure.
        public static let checksumMismatch = Code(.checksumMismatch)
        /// The destination offers no upload protocol this client can speak, or not the one the caller asked for
        /// (`BackendDetector`).
        public static let protocolUnsupported = Code(.protocolUnsupported)
        /// The destination failed a check of what it holds: a Byzantine spot check's hash or Merkle proof differs
        /// from the client's (native `aether/1`). The destination is not trusted for this upload.
        public static let verificationFailed = Code(.verificationFailed)
        /// The destination's receipt names other bytes than the client's own computation: another SHA-256, Merkle
        /// root, chain head, size or checksum of the object or of an acknowledged part (a native receipt, an IETF
        /// `Repr-Digest`, an S3 part's or object's checksum, a tus final upload's length). Final: sending again
        /// cannot change what the destination says it stored, so it is never retried.
        public static let receiptMismatch = Code(.receiptMismatch)
        public var description: String { "\(base)" }
    }

    /// The error's code.
    public let code: Code
    /// A message for people.
    public let message: String
    /// The errno of the local system call that failed underneath, when there was one (EMFILE when no socket could
    /// be made, say).
    public let errno: Int32?
    /// Source location that threw.
    public let location: String

    /// Creates an error; `location` defaults to the caller's file and line.
    public init(
        _ code: Code, _ message: String, errno: Int32? = nil, file: StaticString = #fileID, line: UInt = #line
    ) {
        self.code = code
        self.message = message
        self.errno = errno
        self.location = "\(file):\(line)"
    }

    public var description: String { "TransportError(\(code)): \(message)" }
}
