/// The resume-snapshot session key of the spec's ResumePlanner (upload-engine v2.2, BUG-17):
/// `HKDF-SHA-256(IKM: master, salt: UTF-8(sessionID), info: UTF-8("PR9-resume-" + sessionID), L = 32)`.
///
/// The labels are byte-exact and part of the on-disk format (docs/UPLOAD-SECURITY.md); changing them makes
/// every stored snapshot unreadable.
public enum ResumeKeyDerivation {
    /// The info prefix, byte for byte: ASCII `PR9-resume-`.
    public static let infoPrefix: [UInt8] = Array("PR9-resume-".utf8)

    /// Longest session id accepted, in UTF-8 bytes.
    public static let maximumSessionIDByteCount = 256

    /// The 256-bit session key for `sessionID` under `master`. An empty or over-long id throws `.invalidKey`.
    public static func sessionKey(master: SymmetricKey, sessionID: String) throws(SecurityError) -> SymmetricKey {
        let id = Array(sessionID.utf8)
        guard !id.isEmpty, id.count <= maximumSessionIDByteCount else {
            throw SecurityError(.invalidKey, "a session id is 1...\(maximumSessionIDByteCount) UTF-8 bytes")
        }
        return try HKDF.deriveKey(inputKeyMaterial: master, salt: id, info: infoPrefix + id, outputSize: .bits256)
    }
}
