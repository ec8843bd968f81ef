/// `Aether-Partial` (`docs/PROTOCOL.md` section 3.2.2), on a `409 partial-mismatch`: `index=i, received=q`, the
/// chunk a continuation named and how many of its bytes the receiver holds (0: none). The client continues from `q`
/// (or sends the chunk whole when `q` is 0).
package struct AetherPartialHeader: Sendable, Hashable {
    /// The chunk.
    package var index: Int
    /// Bytes of it the receiver holds, from its first.
    package var received: Int64

    /// A value.
    package init(index: Int, received: Int64) {
        self.index = index
        self.received = received
    }

    /// Parses a field value; unknown, missing and mistyped members are refused.
    package init(parsing value: String) throws(AetherProtocolError) {
        let members = try AetherHeaderMembers(value, field: AetherWire.partialField)
        try members.refuseUnknown(["index", "received"])
        index = Int(try members.integer("index", 0...Int64(AetherWire.maximumChunks)))
        received = try members.integer("received", 0...AetherWire.maximumInteger)
    }

    /// The field value, e.g. `index=3, received=524288`.
    package var fieldValue: String {
        StructuredField.serialize(dictionary: [
            ("index", .integer(Int64(index))), ("received", .integer(received)),
        ])
            ?? ""
    }
}
