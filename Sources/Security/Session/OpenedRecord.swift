/// The result of opening a record into a caller's buffer: its header and how many plaintext bytes were written.
public struct OpenedRecord: Sendable, Hashable {
    /// The authenticated header.
    public let header: RecordHeader
    /// Plaintext bytes written at the start of the output buffer.
    public let plaintextCount: Int
}
