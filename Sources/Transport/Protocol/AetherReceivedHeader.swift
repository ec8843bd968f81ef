/// `Aether-Received` (`docs/PROTOCOL.md` section 3.4), on `HEAD /uploads/{id}`: `chunks=N, prefix=P`, the number
/// of stored chunks and the length in chunks of the stored prefix.
package struct AetherReceivedHeader: Sendable, Hashable {
    /// Stored chunks.
    package var chunks: Int
    /// Contiguous stored chunks from index 0 (at most `chunks`).
    package var prefix: Int

    /// A value.
    package init(chunks: Int, prefix: Int) {
        self.chunks = chunks
        self.prefix = prefix
    }

    /// Parses a field value; unknown members are refused, `prefix` above `chunks` is `.inconsistent`.
    package init(parsing value: String) throws(AetherProtocolError) {
        let members = try AetherHeaderMembers(value, field: AetherWire.receivedField)
        try members.refuseUnknown(["chunks", "prefix"])
        chunks = Int(try members.integer("chunks", 0...Int64(AetherWire.maximumChunks)))
        prefix = Int(try members.integer("prefix", 0...Int64(AetherWire.maximumChunks)))
        guard prefix <= chunks else {
            throw AetherProtocolError(.inconsistent, member: "prefix", "the prefix is longer than the stored chunks")
        }
    }

    /// The field value.
    package var fieldValue: String {
        StructuredField.serialize(dictionary: [
            ("chunks", .integer(Int64(chunks))), ("prefix", .integer(Int64(prefix))),
        ])
            ?? ""
    }
}
