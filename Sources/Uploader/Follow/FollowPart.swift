import AetherIO
import AetherTransport

/// One part of a followed file, read and committed, ready to send: `remote` is the upload as far as this part
/// reaches (its `size` the part's end), which is how a backend checks a part of an upload whose size is unknown.
struct FollowPart: Sendable {
    let index: Int
    let offset: Int64
    let bytes: [UInt8]
    let sha256: Digest32
    let crc32c: UInt32
    let link: Digest32
    let remote: RemoteUpload

    var length: Int64 { Int64(bytes.count) }
}
