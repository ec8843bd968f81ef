/// Maps an S3 error response (status and `<Error><Code>...`) to a `TransportError`. Messages carry the operation,
/// the status, S3's error code and request id, and for non-authentication errors S3's own message cut to 200
/// characters; never a signature, a canonical request or a string to sign (S3 echoes those in
/// `SignatureDoesNotMatch`), never a credential.
enum S3ErrorMapping {
    /// Whether a failure may be retried with the same request (S3's guidance: 500, 503 SlowDown, 502, 504).
    static func isRetryable(_ code: TransportError.Code) -> Bool { code == .throttled || code == .serverFailed }

    /// The XML document of a 2xx answer to `operation`; an `<Error>` document in it (S3 may answer 200 and report
    /// the failure in the body, as CompleteMultipartUpload and UploadPartCopy do once the status is sent) throws
    /// as the error it names.
    static func successDocument(_ response: HTTPResponse, operation: String) throws(TransportError) -> S3XMLElement {
        let document = try S3XMLElement.parse(response.body)
        if document.name == "Error" {
            throw error(
                operation: operation, status: response.status, code: document.text("Code"),
                message: document.text("Message"), requestID: document.text("RequestId"))
        }
        return document
    }

    static let authenticationCodes: Set<String> = [
        "AccessDenied", "SignatureDoesNotMatch", "InvalidAccessKeyId", "InvalidToken", "ExpiredToken",
        "TokenRefreshRequired", "AuthorizationHeaderMalformed", "RequestTimeTooSkewed", "InvalidSecurity",
        "AccountProblem", "AllAccessDisabled",
    ]
    static let goneCodes: Set<String> = ["NoSuchUpload", "NoSuchBucket", "NoSuchKey"]
    static let throttleCodes: Set<String> = ["SlowDown", "ServiceUnavailable", "Throttling", "RequestLimitExceeded"]
    static let serverCodes: Set<String> = ["InternalError", "OperationAborted"]
    /// S3 found that the body it received differs from the checksum or digest sent with it and stored nothing:
    /// damage in transit, cured by sending the body again.
    static let transitDamageCodes: Set<String> = ["BadDigest", "XAmzContentSHA256Mismatch"]

    /// The error for an S3 response `status` with body `body` (an `<Error>` document or anything else).
    static func error(operation: String, status: Int, body: [UInt8]) -> TransportError {
        // A body that is not XML (a proxy's HTML page, nothing) still maps by its status.
        let document = try? S3XMLElement.parse(body)
        let isError = document?.name == "Error"
        return error(
            operation: operation, status: status, code: isError ? document?.text("Code") : nil,
            message: isError ? document?.text("Message") : nil, requestID: isError ? document?.text("RequestId") : nil)
    }

    static func error(operation: String, status: Int, code: String?, message: String?, requestID: String?)
        -> TransportError
    {
        let name = code.map { String($0.prefix(64)) } ?? "no error code"
        var text = "S3 \(operation) failed: HTTP \(status) \(name)"
        if let requestID { text += " (request \(requestID.prefix(64)))" }
        let kind: TransportError.Code
        if let code, authenticationCodes.contains(code) {
            kind = .accessDenied
            text += ": the credentials or the signature were refused"
        } else {
            if let code, goneCodes.contains(code) {
                kind = .gone
            } else if let code, throttleCodes.contains(code) {
                kind = .throttled
            } else if let code, serverCodes.contains(code) {
                kind = .serverFailed
            } else if let code, transitDamageCodes.contains(code) {
                kind = .checksumMismatch
            } else if status == 401 || status == 403 {
                kind = .accessDenied
            } else if status == 404 || status == 410 {
                kind = .gone
            } else if status == 503 || status == 429 {
                kind = .throttled
            } else if status >= 500 {
                kind = .serverFailed
            } else {
                kind = .remoteRejected
            }
            if kind != .accessDenied, let message, !message.isEmpty {
                text += ": " + message.prefix(200)
            }
        }
        return TransportError(kind, text)
    }
}
