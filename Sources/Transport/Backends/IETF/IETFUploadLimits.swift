/// The `Upload-Limit` Dictionary a server sends (draft-05 section 8.2, latest draft section 4.1.4). Unknown keys
/// are ignored; a known key whose value is not a non-negative Integer makes the whole field ignored (nil from
/// `init?`), as the drafts require.
public struct IETFUploadLimits: Sendable, Hashable {
    /// `max-size`: the largest representation in bytes.
    public var maximumSize: Int64?
    /// `min-size`: below this size the server may not offer resumption.
    public var minimumSize: Int64?
    /// `max-append-size`: the largest content of one creation or append request.
    public var maximumAppendSize: Int64?
    /// `min-append-size`: the smallest content of one append that does not complete the upload.
    public var minimumAppendSize: Int64?
    /// `max-age` (latest) or `expires` (draft-05): the resource's remaining lifetime in seconds from the response.
    public var lifetime: Int64?

    /// No limits.
    public init(
        maximumSize: Int64? = nil, minimumSize: Int64? = nil, maximumAppendSize: Int64? = nil,
        minimumAppendSize: Int64? = nil, lifetime: Int64? = nil
    ) {
        self.maximumSize = maximumSize
        self.minimumSize = minimumSize
        self.maximumAppendSize = maximumAppendSize
        self.minimumAppendSize = minimumAppendSize
        self.lifetime = lifetime
    }

    /// Parses a field value as `version` defines it; nil when the field must be ignored.
    public init?(field: String, version: IETFInteropVersion) {
        guard let members = StructuredField.dictionary(field) else { return nil }
        self.init()
        for (key, member) in members {
            let target: WritableKeyPath<IETFUploadLimits, Int64?>
            switch key {
            case "max-size": target = \.maximumSize
            case "min-size": target = \.minimumSize
            case "max-append-size": target = \.maximumAppendSize
            case "min-append-size": target = \.minimumAppendSize
            case version.lifetimeKey: target = \.lifetime
            default: continue
            }
            guard case .item(.integer(let value)) = member, value >= 0 else { return nil }
            self[keyPath: target] = value
        }
    }

    /// The field value this struct stands for, keys in the drafts' order.
    public func field(version: IETFInteropVersion) -> String {
        var members: [String] = []
        if let maximumSize { members.append("max-size=\(maximumSize)") }
        if let minimumSize { members.append("min-size=\(minimumSize)") }
        if let maximumAppendSize { members.append("max-append-size=\(maximumAppendSize)") }
        if let minimumAppendSize { members.append("min-append-size=\(minimumAppendSize)") }
        if let lifetime { members.append("\(version.lifetimeKey)=\(lifetime)") }
        return members.isEmpty ? "min-size=0" : members.joined(separator: ", ")
    }

    /// The backend capabilities these limits allow, within `base`.
    func capabilities(_ base: BackendCapabilities) -> BackendCapabilities {
        var result = base
        if let maximumSize { result.maximumObjectSize = min(result.maximumObjectSize, maximumSize) }
        if let maximumAppendSize, maximumAppendSize > 0 {
            result.maximumPartSize = min(result.maximumPartSize, maximumAppendSize)
        }
        if let minimumAppendSize { result.minimumPartSize = max(result.minimumPartSize, minimumAppendSize) }
        return result
    }

    /// A sentence for an error message.
    var summary: String { field(version: .latest) }
}
