/// The receiver's resources (`docs/PROTOCOL.md` sections 3-6), parsed from the request path as received.
/// Percent-escapes, dot segments, empty segments and anything but the listed shapes are refused before an id
/// reaches storage.
enum UploadRoute: Equatable {
    /// `/uploads`: creation and discovery.
    case uploads
    /// `/uploads/batch`: a batch of whole small files (section 3.10; no upload id is 5 characters).
    case batch
    /// `/uploads/{id}`.
    case upload(UploadID)
    /// `/uploads/{id}/chunks/{index}`.
    case chunk(UploadID, index: Int)
    /// `/uploads/{id}/parity/{group}/{shard}`.
    case parity(UploadID, group: Int, shard: Int)
    /// `/uploads/{id}/challenges`.
    case challenges(UploadID)
    /// `/uploads/{id}/possession`.
    case possession(UploadID)
    /// `/uploads/{id}/complete`.
    case complete(UploadID)
    /// `/uploads/{id}/capture`: the upload read as a capture manifest, checked against what the receiver holds.
    case capture(UploadID)
    /// `/healthz`.
    case health
    /// `/metrics`.
    case metrics

    /// The route of `path`: `.malformedRequest` for escapes, dot or empty segments and malformed numbers,
    /// `.notFound` for anything else that names no resource.
    init(path: String) throws(ReceiverError) {
        guard path.utf8.count <= 512, path.hasPrefix("/") else {
            throw ReceiverError(.malformedRequest, "the request target is not an absolute path")
        }
        guard !path.contains("%") else {
            throw ReceiverError(.malformedRequest, "the path holds percent-escapes")
        }
        var segments = path.dropFirst().split(separator: "/", omittingEmptySubsequences: false).map(String.init)
        if segments.count > 1, segments.last == "" { segments.removeLast() }
        guard segments.allSatisfy({ !$0.isEmpty && $0 != "." && $0 != ".." }) else {
            throw ReceiverError(.malformedRequest, "the path holds an empty or dot segment")
        }
        guard
            segments.allSatisfy({ segment in
                segment.utf8.allSatisfy { (0x61...0x7A).contains($0) || (0x30...0x39).contains($0) || $0 == 0x2D }
            })
        else {
            throw ReceiverError(.notFound, "no resource at this path")
        }
        switch segments.count {
        case 1 where segments[0] == "uploads": self = .uploads
        case 1 where segments[0] == "healthz": self = .health
        case 1 where segments[0] == "metrics": self = .metrics
        case 2 where segments[0] == "uploads" && segments[1] == "batch": self = .batch
        case 2 where segments[0] == "uploads": self = .upload(try UploadID(segments[1]))
        case 3 where segments[0] == "uploads":
            let id = try UploadID(segments[1])
            switch segments[2] {
            case "challenges": self = .challenges(id)
            case "possession": self = .possession(id)
            case "complete": self = .complete(id)
            case "capture": self = .capture(id)
            default: throw ReceiverError(.notFound, "no resource at this path")
            }
        case 4 where segments[0] == "uploads" && segments[2] == "chunks":
            self = .chunk(try UploadID(segments[1]), index: try Self.number(segments[3], "chunk index"))
        case 5 where segments[0] == "uploads" && segments[2] == "parity":
            self = .parity(
                try UploadID(segments[1]), group: try Self.number(segments[3], "parity group"),
                shard: try Self.number(segments[4], "parity shard"))
        default:
            throw ReceiverError(.notFound, "no resource at this path")
        }
    }

    /// The upload the route names, if any.
    var uploadID: UploadID? {
        switch self {
        case .upload(let id), .chunk(let id, _), .parity(let id, _, _), .challenges(let id), .possession(let id),
            .complete(let id), .capture(let id):
            id
        case .uploads, .batch, .health, .metrics: nil
        }
    }

    /// A decimal index: no sign, no leading zero, at most 9 digits.
    private static func number(_ text: String, _ what: String) throws(ReceiverError) -> Int {
        guard (1...9).contains(text.utf8.count), text.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }),
            text == "0" || !text.hasPrefix("0"), let value = Int(text)
        else {
            throw ReceiverError(.malformedRequest, "the \(what) is not a decimal number without leading zeros")
        }
        return value
    }
}
