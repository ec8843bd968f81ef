/// Converts between Aether Content Identifiers and CIDv1 (raw, sha2-256, base32), so a file's
/// identity can be looked up in IPFS-style content-addressed stores. Both directions validate
/// strictly and are exact inverses.
public enum CIDMapper {
    /// The CIDv1 naming the same bytes as `aci`.
    public static func cid(for aci: ACI) -> CIDv1 { CIDv1(digest: aci.digest) }

    /// The ACI naming the same bytes as `cid`.
    public static func aci(for cid: CIDv1) -> ACI { ACI(digest: cid.digest) }

    /// Parses an ACI text form and returns its CID text form (`b...`).
    public static func cidString(fromACI text: String) throws(IntegrityError) -> String {
        cid(for: try ACI(parsing: text)).string
    }

    /// Parses a CID text form and returns its ACI text form.
    public static func aciString(fromCID text: String) throws(IntegrityError) -> String {
        aci(for: try CIDv1(string: text)).description
    }
}
