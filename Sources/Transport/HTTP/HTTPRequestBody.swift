public import AetherIO

/// A request body. Bytes are never copied on the way in: libcurl's read callback copies straight from the
/// array or the IO layer's chunk buffer into its socket buffer.
public struct HTTPRequestBody: Sendable {
    enum Storage: Sendable {
        case none
        case pieces([HTTPBodyPiece], length: Int64)
        case stream(HTTPBodyStream)
    }

    let storage: Storage

    /// No body (a `PUT`, `POST` or `PATCH` sends `Content-Length: 0`).
    public static let empty = HTTPRequestBody(storage: .none)

    /// A body held in memory.
    public static func bytes(_ bytes: [UInt8]) -> HTTPRequestBody {
        HTTPRequestBody(storage: .pieces([.bytes(bytes)], length: Int64(bytes.count)))
    }

    /// Chunks as the IO layer read them (`FileChunkReader.next()`), sent from their pooled buffers in order.
    /// Each buffer goes back to its pool when the request ends.
    public static func chunks(_ chunks: [Chunk]) -> HTTPRequestBody {
        HTTPRequestBody(
            storage: .pieces(chunks.map { .chunk($0) }, length: chunks.reduce(Int64(0)) { $0 + Int64($1.count) }))
    }

    /// A body written while it is sent (see `HTTPBodyStream`).
    public static func stream(_ stream: HTTPBodyStream) -> HTTPRequestBody {
        HTTPRequestBody(storage: .stream(stream))
    }

    /// The number of bytes when known in advance (sent as `Content-Length`); nil means chunked (HTTP/1.1) or
    /// end-of-stream (HTTP/2).
    public var length: Int64? {
        switch storage {
        case .none: 0
        case .pieces(_, let length): length
        case .stream(let stream): stream.length
        }
    }

    var isEmpty: Bool {
        if case .none = storage { return true }
        return false
    }
}

/// One contiguous run of body bytes, owned by the caller until the transfer ends.
enum HTTPBodyPiece: Sendable {
    case bytes([UInt8])
    case chunk(Chunk)

    var count: Int {
        switch self {
        case .bytes(let bytes): bytes.count
        case .chunk(let chunk): chunk.count
        }
    }
}
