/// What the destination holds of an upload.
public enum RemoteProgress: Sendable, Hashable {
    /// A contiguous prefix of this many bytes (IETF, tus).
    case offset(Int64, complete: Bool)
    /// These parts (S3 `ListParts`).
    case parts([PartReceipt])
    /// These chunks, by index (native bitmap).
    case chunks(Set<Int>, complete: Bool)
    /// The upload is gone (expired, aborted or unknown): start again.
    case gone
}
