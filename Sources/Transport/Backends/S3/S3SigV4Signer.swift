package import AetherIO

/// AWS Signature Version 4 over request headers (the `Authorization` header form), as S3 and every other AWS
/// service check it: canonical request, string to sign, the derived signing key, the signature.
///
/// The canonical URI is the path's bytes percent-encoded once, `/` kept (S3's rule; the AWS SigV4 test suite's
/// cases use it too); `normalizePath` removes `.`/`..` segments and empty segments first (other services; never
/// S3, where a key may hold them). The signing key is derived per request in `SecureBytes`.
package struct S3SigV4Signer: Sendable {
    /// What the signature covers of the body (`x-amz-content-sha256`).
    package enum Payload: Sendable, Hashable {
        /// The body is not covered: `UNSIGNED-PAYLOAD` (allowed by S3; use over TLS).
        case unsigned
        /// The body's SHA-256, which the server recomputes and compares.
        case sha256(Digest32)

        var hashText: String {
            switch self {
            case .unsigned: "UNSIGNED-PAYLOAD"
            case .sha256(let digest): digest.hex
            }
        }
    }

    /// A request to sign: the path and query as decoded text (they are encoded here), the headers to sign.
    package struct Request: Sendable {
        /// The method.
        package var method: String
        /// `host` or `host:port` as sent in `Host` (the port only when it is not the scheme's default).
        package var host: String
        /// The decoded absolute path (`/bucket/key` or `/key`).
        package var path: String
        /// Decoded query parameters; a name without `=` has an empty value.
        package var query: [(name: String, value: String)]
        /// Headers that are sent and signed (besides `host` and those the signer adds).
        package var headers: HTTPHeaders

        /// A request.
        package init(
            method: String, host: String, path: String, query: [(name: String, value: String)] = [],
            headers: HTTPHeaders = HTTPHeaders()
        ) {
            self.method = method
            self.host = host
            self.path = path
            self.query = query
            self.headers = headers
        }
    }

    /// What signing produced: the headers to add to the request, and the intermediate texts (for tests; they hold
    /// no secret).
    package struct Signature: Sendable {
        /// `X-Amz-Date`, `X-Amz-Security-Token`, `x-amz-content-sha256` (where asked) and `Authorization`.
        package let headers: HTTPHeaders
        /// The canonical request.
        package let canonicalRequest: String
        /// The string to sign.
        package let stringToSign: String
        /// The signature in lower-case hex.
        package let signature: String
    }

    /// The key pair.
    package let credentials: S3Credentials
    /// The region (`us-east-1`; R2: `auto`).
    package let region: String
    /// The service (`s3`).
    package let service: String
    /// Remove dot and empty segments from the path before encoding (not S3).
    package let normalizePath: Bool

    /// A signer.
    package init(credentials: S3Credentials, region: String, service: String = "s3", normalizePath: Bool = false) {
        self.credentials = credentials
        self.region = region
        self.service = service
        self.normalizePath = normalizePath
    }

    /// Signs `request` at `time` (seconds since 1970, UTC). `contentHashHeader` adds and signs
    /// `x-amz-content-sha256` (S3 requires it); `signSessionToken` false sends the token unsigned (an STS
    /// variant some services want; S3 signs it).
    package func sign(
        _ request: Request, payload: Payload, at time: Int64, contentHashHeader: Bool = true,
        signSessionToken: Bool = true
    ) throws(TransportError) -> Signature {
        guard !region.isEmpty, !service.isEmpty, region.utf8.allSatisfy(Self.isUnreserved),
            service.utf8.allSatisfy(Self.isUnreserved)
        else { throw TransportError(.invalidArgument, "the region or service name is empty or not a plain token") }
        let stamp = SigV4Timestamp(secondsSince1970: time)
        var added = HTTPHeaders()
        added.add("X-Amz-Date", stamp.dateTime)
        var signed: [(String, String)] = [("host", request.host)]
        for field in request.headers where !HTTPHeaders.equalNames(field.name, "host") {
            signed.append((field.name.lowercased(), field.value))
        }
        signed.append(("x-amz-date", stamp.dateTime))
        if let token = credentials.sessionTokenHeaderValue {
            added.add("X-Amz-Security-Token", token)
            if signSessionToken { signed.append(("x-amz-security-token", token)) }
        }
        if contentHashHeader {
            added.add("x-amz-content-sha256", payload.hashText)
            signed.append(("x-amz-content-sha256", payload.hashText))
        }
        let (canonicalHeaders, signedNames) = Self.canonicalHeaders(signed)
        let path = normalizePath ? Self.normalized(request.path) : request.path
        let canonicalRequest = [
            request.method, Self.encode(path, keepSlash: true), Self.canonicalQuery(request.query),
            canonicalHeaders, signedNames, payload.hashText,
        ].joined(separator: "\n")
        let scope = "\(stamp.date)/\(region)/\(service)/aws4_request"
        let stringToSign = [
            "AWS4-HMAC-SHA256", stamp.dateTime, scope, SHA256.hash(Array(canonicalRequest.utf8)).hex,
        ].joined(separator: "\n")
        let signature: String
        do {
            let key = try signingKey(date: stamp.date)
            signature = try HMACSHA256.authenticate(Array(stringToSign.utf8), key: key).hex
        } catch {
            throw TransportError(.systemCall, "HMAC-SHA-256 failed while signing: \(error.code)")
        }
        added.add(
            "Authorization",
            "AWS4-HMAC-SHA256 Credential=\(credentials.accessKeyID)/\(scope), SignedHeaders=\(signedNames), "
                + "Signature=\(signature)")
        return Signature(
            headers: added, canonicalRequest: canonicalRequest, stringToSign: stringToSign, signature: signature)
    }

    /// kSigning = HMAC(HMAC(HMAC(HMAC("AWS4" + secret, date), region), service), "aws4_request"), each step's
    /// output kept as a secret.
    private func signingKey(date: String) throws(IOError) -> SecureBytes {
        let prefixed = unsafe credentials.secretAccessKey.withUnsafeBytes { secret in
            unsafe SecureBytes(count: 4 + secret.count) { out in
                for (index, byte) in "AWS4".utf8.enumerated() { unsafe out[index] = byte }
                for index in 0..<secret.count { unsafe out[4 + index] = unsafe secret[index] }
            }
        }
        var key = prefixed
        for step in [date, region, service, "aws4_request"] {
            var digest = try HMACSHA256.authenticate(Array(step.utf8), key: key)
            key = unsafe digest.withUnsafeBytes { unsafe SecureBytes(copying: $0) }
            digest = .zero
        }
        return key
    }

    /// Lower-case names sorted, values trimmed with inner runs of spaces collapsed, repeats joined by commas.
    static func canonicalHeaders(_ fields: [(String, String)]) -> (text: String, signedNames: String) {
        var merged: [String: [String]] = [:]
        for (name, value) in fields { merged[name, default: []].append(canonicalValue(value)) }
        let names = merged.keys.sorted { Array($0.utf8).lexicographicallyPrecedes(Array($1.utf8)) }
        let text = names.map { "\($0):\(merged[$0, default: []].joined(separator: ","))\n" }.joined()
        return (text, names.joined(separator: ";"))
    }

    static func canonicalValue(_ value: String) -> String {
        var out: [UInt8] = []
        var pendingSpace = false
        for byte in value.utf8 {
            if byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D {
                pendingSpace = !out.isEmpty
            } else {
                if pendingSpace { out.append(0x20) }
                pendingSpace = false
                out.append(byte)
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// Parameters encoded, then sorted by name and value (byte order).
    static func canonicalQuery(_ query: [(name: String, value: String)]) -> String {
        query.map { (encode($0.name, keepSlash: false), encode($0.value, keepSlash: false)) }
            .sorted { lhs, rhs in
                lhs.0 == rhs.0
                    ? Array(lhs.1.utf8).lexicographicallyPrecedes(Array(rhs.1.utf8))
                    : Array(lhs.0.utf8).lexicographicallyPrecedes(Array(rhs.0.utf8))
            }
            .map { "\($0.0)=\($0.1)" }.joined(separator: "&")
    }

    /// RFC 3986 percent-encoding of every byte but the unreserved ones (and `/` when `keepSlash`), upper-case hex.
    static func encode(_ text: String, keepSlash: Bool) -> String {
        let hex = Array("0123456789ABCDEF".utf8)
        var out: [UInt8] = []
        out.reserveCapacity(text.utf8.count)
        for byte in text.utf8 {
            if isUnreserved(byte) || (keepSlash && byte == 0x2F) {
                out.append(byte)
            } else {
                out.append(0x25)
                out.append(hex[Int(byte >> 4)])
                out.append(hex[Int(byte & 0x0F)])
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    static func isUnreserved(_ byte: UInt8) -> Bool {
        (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A) || (byte >= 0x30 && byte <= 0x39)
            || byte == 0x2D || byte == 0x2E || byte == 0x5F || byte == 0x7E
    }

    /// RFC 3986 section 5.2.4 dot-segment removal with empty segments dropped; a trailing slash is kept.
    static func normalized(_ path: String) -> String {
        var segments: [Substring] = []
        let parts = path.split(separator: "/", omittingEmptySubsequences: true)
        for part in parts {
            if part == "." { continue }
            if part == ".." {
                if !segments.isEmpty { segments.removeLast() }
                continue
            }
            segments.append(part)
        }
        var result = "/" + segments.joined(separator: "/")
        let last = parts.last
        if !segments.isEmpty, path.hasSuffix("/") || last == "." || last == ".." { result += "/" }
        return result
    }
}

/// The two SigV4 time forms of one UTC instant: `yyyyMMdd` and `yyyyMMdd'T'HHmmss'Z'`.
struct SigV4Timestamp: Sendable, Hashable {
    let date: String
    let dateTime: String

    init(secondsSince1970 seconds: Int64) {
        let days = seconds >= 0 ? seconds / 86_400 : (seconds - 86_399) / 86_400
        let secondOfDay = seconds - days * 86_400
        // Civil date from days since 1970-01-01 (Howard Hinnant's algorithm).
        let shifted = days + 719_468
        let era = (shifted >= 0 ? shifted : shifted - 146_096) / 146_097
        let dayOfEra = shifted - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1_460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthIndex = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * monthIndex + 2) / 5 + 1
        let month = monthIndex < 10 ? monthIndex + 3 : monthIndex - 9
        let year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
        func pad(_ value: Int64, _ width: Int) -> String {
            let text = String(value)
            return String(repeating: "0", count: max(0, width - text.count)) + text
        }
        date = pad(year, 4) + pad(month, 2) + pad(day, 2)
        dateTime =
            date + "T" + pad(secondOfDay / 3_600, 2) + pad(secondOfDay / 60 % 60, 2) + pad(secondOfDay % 60, 2) + "Z"
    }
}
