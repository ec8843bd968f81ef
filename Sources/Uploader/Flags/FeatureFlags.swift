/// The Uploader's switchable features (upload-engine v2.2, "feature flags for gradual rollout"), each on or off
/// per upload.
///
/// Defaults: every feature is on. The spec ships them all in v1.0 and flags exist to turn one off when it
/// misbehaves in the field; where the spec turns a feature off for a reason of its own (compression on the
/// ULTRAFAST tier, parity on a clean link) that is the scheduler's per-tier decision, taken only when the flag
/// allows the feature at all.
///
/// The command-line form is a comma-separated list applied over the defaults: `name` or `+name` turns a
/// feature on, `-name` turns it off, later entries win (`--flags -compression,-dedup`). Names are the
/// `Flag` raw values; an unknown name throws `.unknownFeatureFlag`, an empty entry `.invalidArgument`.
public struct FeatureFlags: Sendable, Hashable, CustomStringConvertible {
    /// One feature.
    public enum Flag: String, Sendable, CaseIterable {
        /// Reed-Solomon parity chunks when the link is lossy and the backend takes them.
        case parity
        /// Byzantine sampling: challenge the server to prove it holds sampled chunks.
        case byzantineSampling = "byzantine-sampling"
        /// Proof-of-possession deduplication ("instant upload").
        case dedup
        /// Chunk size chosen and re-chosen by the fusion scheduler (off: the fixed configured size).
        case adaptiveChunking = "adaptive-chunking"
        /// Chunk compression (`Content-Encoding`) when the compressibility probe says it pays.
        case compression
    }

    /// The features that are on.
    public private(set) var enabled: Set<Flag>

    /// The defaults: every feature on.
    public static let defaults = FeatureFlags(enabled: Set(Flag.allCases))

    /// Flags with exactly `enabled` on.
    public init(enabled: Set<Flag>) { self.enabled = enabled }

    /// The defaults changed by a `--flags` list (`a,-b,+c`); the empty string leaves the defaults.
    public init(parsing list: String) throws(UploaderError) {
        self = .defaults
        guard !list.isEmpty else { return }
        for entry in list.split(separator: ",", omittingEmptySubsequences: false) {
            var name = Substring(entry)
            var on = true
            if let sign = name.first, sign == "-" || sign == "+" {
                on = sign == "+"
                name = name.dropFirst()
            }
            guard !name.isEmpty else {
                throw UploaderError(.invalidArgument, "an empty entry in the feature flag list \"\(list)\"")
            }
            guard let flag = Flag(rawValue: String(name)) else {
                let known = Flag.allCases.map(\.rawValue).joined(separator: ", ")
                throw UploaderError(
                    .unknownFeatureFlag, "unknown feature flag \"\(name)\"; the flags are \(known)")
            }
            set(flag, on)
        }
    }

    /// Whether `flag` is on.
    public func isEnabled(_ flag: Flag) -> Bool { enabled.contains(flag) }

    /// Turns `flag` on or off.
    public mutating func set(_ flag: Flag, _ on: Bool) {
        if on { enabled.insert(flag) } else { enabled.remove(flag) }
    }

    /// Parity chunks allowed.
    public var parity: Bool {
        get { isEnabled(.parity) }
        set { set(.parity, newValue) }
    }
    /// Byzantine sampling allowed.
    public var byzantineSampling: Bool {
        get { isEnabled(.byzantineSampling) }
        set { set(.byzantineSampling, newValue) }
    }
    /// Deduplication allowed.
    public var dedup: Bool {
        get { isEnabled(.dedup) }
        set { set(.dedup, newValue) }
    }
    /// Adaptive chunk size allowed.
    public var adaptiveChunking: Bool {
        get { isEnabled(.adaptiveChunking) }
        set { set(.adaptiveChunking, newValue) }
    }
    /// Compression allowed.
    public var compression: Bool {
        get { isEnabled(.compression) }
        set { set(.compression, newValue) }
    }

    /// Every flag in declaration order, `+name` or `-name`; parsing it gives these flags back.
    public var description: String {
        Flag.allCases.map { (isEnabled($0) ? "+" : "-") + $0.rawValue }.joined(separator: ",")
    }
}
