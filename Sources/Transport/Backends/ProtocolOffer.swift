/// What one HTTP server said about the upload protocols it speaks, read from its answer to the detector's
/// `OPTIONS` request (docs/PROTOCOL.md section 1).
///
/// - native `aether/1`: an `Aether-Capabilities` field;
/// - IETF resumable upload: an `Upload-Limit` or an `Upload-Draft-Interop-Version` field;
/// - tus 1.0: a `Tus-Resumable` or a `Tus-Version` field.
///
/// A field counts when it is present, whatever its value: the backend built for the chosen protocol checks the
/// value (a malformed `Upload-Limit` is ignored as section 4.1 says, a `Tus-Version` without 1.0.0 is refused).
/// An answer of 405 or 501 (the server does not implement `OPTIONS`) is read for IETF and tus only.
package struct ProtocolOffer: Sendable, Equatable {
    /// The status of the answer.
    package let status: Int
    /// The protocols offered, among native, IETF and tus.
    package let modes: Set<TransportMode>
    /// `Upload-Draft-Interop-Version` of the answer when it is an Integer, else nil.
    package let ietfInteropVersion: Int64?
    /// The answer's header fields.
    package let headers: HTTPHeaders

    /// Reads an answer to `OPTIONS`: a 2xx for every protocol, a 405 or 501 for IETF and tus. Any other status
    /// offers nothing.
    package init(status: Int, headers: HTTPHeaders) {
        self.status = status
        self.headers = headers
        let versionField = headers.values("Upload-Draft-Interop-Version").joined(separator: ", ")
        if case .integer(let value)? = StructuredField.item(versionField) {
            ietfInteropVersion = value
        } else {
            ietfInteropVersion = nil
        }
        var modes: Set<TransportMode> = []
        let answered = (200..<300).contains(status)
        if answered || Self.withoutOptionsSupport(status) {
            if answered, headers.contains("Aether-Capabilities") { modes.insert(.native) }
            if headers.contains("Upload-Limit") || headers.contains("Upload-Draft-Interop-Version") {
                modes.insert(.ietfResumable)
            }
            if headers.contains("Tus-Resumable") || headers.contains("Tus-Version") { modes.insert(.tus) }
        }
        self.modes = modes
    }

    /// The offered protocols in the order a client prefers them (native, IETF, tus).
    package var preferred: [TransportMode] { TransportMode.httpPreference.filter(modes.contains) }

    /// 405 Method Not Allowed or 501 Not Implemented: the server does not answer `OPTIONS` itself.
    static func withoutOptionsSupport(_ status: Int) -> Bool { status == 405 || status == 501 }
}
