/// `Aether-Capabilities` (`docs/PROTOCOL.md` section 2): what a receiver speaking native `aether/1` accepts. A
/// Structured Fields Dictionary; `fieldValue` writes every member in the document's order, parsing ignores
/// members it does not know (newer receivers add some) but refuses known members of the wrong type or range.
/// The integers are required; absent Booleans are false and absent strings empty.
package struct AetherCapabilities: Sendable, Hashable {
    /// The protocol version (`v`); this code speaks 1.
    package var version: Int
    /// The smallest chunk in bytes (`min-chunk`), except the last chunk.
    package var minimumChunkSize: Int64
    /// The largest chunk in bytes (`max-chunk`).
    package var maximumChunkSize: Int64
    /// The largest object in bytes (`max-object`).
    package var maximumObjectSize: Int64
    /// The most chunks one upload may have (`max-chunks`).
    package var maximumChunks: Int
    /// Chunk requests accepted at once per upload (`parallel`).
    package var parallel: Int
    /// Parity codes accepted (`parity`, space-separated names; `rs8`).
    package var parityCodes: [String]
    /// Content codings accepted on chunks (`encodings`); names this code does not know are dropped.
    package var encodings: [ContentCoding]
    /// Whether proof-of-possession dedup is offered (`possession`).
    package var possession: Bool
    /// Whether Byzantine spot checks are answered (`challenges`).
    package var challenges: Bool
    /// Seconds an idle upload is kept (`expires`).
    package var expires: Int64
    /// The most chunks one run request may carry (`max-run`, section 3.2.1); 1 (absent): no runs.
    package var maximumRun: Int
    /// Whether a cut chunk's received prefix is kept and a run continuing from it is accepted (`resume-chunk`,
    /// section 3.2.2); false (absent): a cut chunk is sent again whole.
    package var resumesChunks: Bool
    /// The spot-check version answered (`challenge-v`, section 3.6); nil (absent): a receiver of before version 2,
    /// whose answers prove nothing about the bytes, so no spot check is made against it.
    package var challengeVersion: Int?
    /// The most bytes the ranges of one challenge may add up to (`challenge-bytes`); given with `challenge-v`.
    package var maximumChallengeBytes: Int64?
    /// Whether the create request's `metadata` (a file's name, say) is taken and kept (`metadata`, section 3.1);
    /// false (absent): none is sent, since an older receiver refuses a member it does not know.
    package var metadata: Bool
    /// The most whole files one batch request may carry (`max-batch`, section 3.10), each at most `max-chunk`
    /// bytes; 0 (absent): no batches.
    package var maximumBatch: Int
    /// The most bytes of files one batch may carry (`batch-bytes`); given with `max-batch`.
    package var maximumBatchBytes: Int64

    /// Whether spot checks of the version this code speaks can be made: `challenges`, `challenge-v=2` and a
    /// `challenge-bytes` bound.
    package var answersSpotChecks: Bool {
        challenges && challengeVersion == AetherWire.spotCheckVersion && (maximumChallengeBytes ?? 0) > 0
    }

    /// Capabilities as given.
    package init(
        version: Int = AetherWire.version, minimumChunkSize: Int64 = 256 << 10, maximumChunkSize: Int64 = 64 << 20,
        maximumObjectSize: Int64 = 1 << 40, maximumChunks: Int = AetherWire.maximumChunks, parallel: Int = 16,
        parityCodes: [String] = ["rs8"], encodings: [ContentCoding] = [.zstd, .deflate], possession: Bool = true,
        challenges: Bool = true, expires: Int64 = 86_400, maximumRun: Int = 1, resumesChunks: Bool = false,
        challengeVersion: Int? = AetherWire.spotCheckVersion, maximumChallengeBytes: Int64? = 16 << 20,
        metadata: Bool = false, maximumBatch: Int = 0, maximumBatchBytes: Int64 = 0
    ) {
        self.metadata = metadata
        self.maximumBatch = maximumBatch
        self.maximumBatchBytes = maximumBatch > 0 ? maximumBatchBytes : 0
        self.maximumRun = maximumRun
        self.resumesChunks = resumesChunks
        self.challengeVersion = challengeVersion
        self.maximumChallengeBytes = maximumChallengeBytes
        self.version = version
        self.minimumChunkSize = minimumChunkSize
        self.maximumChunkSize = maximumChunkSize
        self.maximumObjectSize = maximumObjectSize
        self.maximumChunks = maximumChunks
        self.parallel = parallel
        self.parityCodes = parityCodes
        self.encodings = encodings
        self.possession = possession
        self.challenges = challenges
        self.expires = expires
    }

    /// Parses a field value.
    package init(parsing value: String) throws(AetherProtocolError) {
        let members = try AetherHeaderMembers(value, field: AetherWire.capabilitiesField)
        let limit = AetherWire.maximumInteger
        version = Int(try members.integer("v", 1...999))
        minimumChunkSize = try members.integer("min-chunk", 1...limit)
        maximumChunkSize = try members.integer("max-chunk", 1...limit)
        guard minimumChunkSize <= maximumChunkSize else {
            throw AetherProtocolError(.inconsistent, member: "min-chunk", "min-chunk is larger than max-chunk")
        }
        maximumObjectSize = try members.integer("max-object", 0...limit)
        maximumChunks = Int(try members.integer("max-chunks", 1...Int64(Int32.max)))
        parallel = Int(try members.integer("parallel", 1...65_535))
        parityCodes = Self.words(try members.string("parity") ?? "")
        encodings = Self.words(try members.string("encodings") ?? "").compactMap { ContentCoding(token: $0) }
        possession = try members.boolean("possession")
        challenges = try members.boolean("challenges")
        expires = try members.integer("expires", 0...limit)
        maximumRun = members.has("max-run") ? Int(try members.integer("max-run", 1...65_535)) : 1
        resumesChunks = try members.boolean("resume-chunk")
        metadata = try members.boolean("metadata")
        maximumBatch =
            members.has("max-batch")
            ? Int(try members.integer("max-batch", 1...Int64(AetherWire.maximumBatchFiles))) : 0
        maximumBatchBytes = members.has("batch-bytes") ? try members.integer("batch-bytes", 1...limit) : 0
        guard (maximumBatch == 0) == (maximumBatchBytes == 0) else {
            throw AetherProtocolError(.inconsistent, member: "batch-bytes", "max-batch and batch-bytes come together")
        }
        challengeVersion = members.has("challenge-v") ? Int(try members.integer("challenge-v", 1...999)) : nil
        maximumChallengeBytes =
            members.has("challenge-bytes") ? try members.integer("challenge-bytes", 1...limit) : nil
        guard (challengeVersion == nil) == (maximumChallengeBytes == nil) else {
            throw AetherProtocolError(
                .inconsistent, member: "challenge-bytes", "challenge-v and challenge-bytes come together")
        }
    }

    private static func words(_ text: String) -> [String] {
        text.split(separator: " ", omittingEmptySubsequences: true).map(String.init)
    }

    private var spotCheckMembers: [(key: String, value: StructuredField.Item)] {
        guard let challengeVersion, let maximumChallengeBytes else { return [] }
        return [
            ("challenge-v", .integer(Int64(challengeVersion))), ("challenge-bytes", .integer(maximumChallengeBytes)),
        ]
    }

    /// The field value with every member, e.g. `v=1, min-chunk=262144, ..., possession, challenges, expires=86400`.
    package var fieldValue: String {
        let members: [(key: String, value: StructuredField.Item)] =
            [
                ("v", .integer(Int64(version))), ("min-chunk", .integer(minimumChunkSize)),
                ("max-chunk", .integer(maximumChunkSize)), ("max-object", .integer(maximumObjectSize)),
                ("max-chunks", .integer(Int64(maximumChunks))), ("parallel", .integer(Int64(parallel))),
                ("parity", .string(parityCodes.joined(separator: " "))),
                ("encodings", .string(encodings.map(\.rawValue).joined(separator: " "))),
                ("possession", .boolean(possession)), ("challenges", .boolean(challenges)),
                ("expires", .integer(expires)),
            ] + (maximumRun > 1 ? [("max-run", .integer(Int64(maximumRun)))] : [])
            + (resumesChunks ? [("resume-chunk", .boolean(true))] : []) + spotCheckMembers
            + (metadata ? [("metadata", .boolean(true))] : [])
            + (maximumBatch > 0
                ? [("max-batch", .integer(Int64(maximumBatch))), ("batch-bytes", .integer(maximumBatchBytes))] : [])
        return StructuredField.serialize(dictionary: members) ?? ""
    }
}
