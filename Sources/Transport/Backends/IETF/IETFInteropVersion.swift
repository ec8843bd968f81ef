/// Which iteration of the IETF resumable upload draft a request speaks, sent as `Upload-Draft-Interop-Version`
/// (an Integer) on every request. docs/PROTOCOL.md section 4 lists each version's rules.
public enum IETFInteropVersion: Int, Sendable, Hashable, CaseIterable {
    /// draft-ietf-httpbis-resumable-upload-05 (interop version 6): what tusd and tus-js-client speak.
    case draft05 = 6
    /// The latest draft text: interop version 8 (introduced by draft -09 and unchanged through the editor's copy
    /// after draft -11); `PATCH` bodies are `application/partial-upload`, the lifetime limit is `max-age`.
    case latest = 8

    /// The `Upload-Limit` key that carries the upload resource's remaining lifetime in seconds.
    var lifetimeKey: String {
        switch self {
        case .draft05: "expires"
        case .latest: "max-age"
        }
    }
}
