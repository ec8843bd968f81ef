/// One check behind a receipt: what was compared, by whom, over how many of the upload's parts. A receipt lists
/// only the checks that were made, so it never claims one the server did not make.
public struct UploadCheck: Sendable, Hashable {
    /// Who compared.
    public enum Party: String, Sendable, Hashable {
        /// The destination, which refuses what does not match.
        case server
        /// This client, from what the destination answered.
        case client
    }

    /// A stable name (`part-sha256`, `part-crc32c`, `part-etag-md5`, `object-crc32c`, `object-etag`).
    public var name: String
    /// Who made it.
    public var party: Party
    /// The parts it covered.
    public var parts: Int
    /// The parts of the upload.
    public var of: Int
    /// What it compared, for people.
    public var summary: String

    /// A check.
    public init(name: String, party: Party, parts: Int, of: Int, summary: String) {
        self.name = name
        self.party = party
        self.parts = parts
        self.of = of
        self.summary = summary
    }

    /// The per-part checks `parts` record, each with the number of parts it covered (those without a record, such
    /// as parts listed by ListParts on a resume, count as unchecked).
    public static func tally(_ parts: [PartReceipt]) -> [UploadCheck] {
        PartCheck.allCases.compactMap { check in
            let covered = parts.filter { $0.checks?.contains(check) == true }.count
            guard covered > 0 else { return nil }
            return UploadCheck(
                name: check.rawValue, party: check.party, parts: covered, of: parts.count, summary: check.summary)
        }
    }
}
