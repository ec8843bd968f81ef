package import AetherIO
import AetherIntegrity

/// A batch of whole small files in one request (`docs/PROTOCOL.md` section 3.10), `application/aether-batch`: this
/// document (`{"files":[...]}`), then each file's bytes in the document's order. Each file is a one-chunk native
/// upload described at once: its creation, its chunk's CRC32C and SHA-256 (the whole file's), and the completion's
/// Merkle root and chain head (the chunk's link).
package struct NativeBatchRequest: Sendable, Hashable {
    /// One file of a batch.
    package struct File: Sendable, Hashable {
        /// The creation (section 3.1): one chunk, a known size, no parity.
        package var create: NativeCreateRequest
        /// CRC32C of the file's bytes (4 bytes, big-endian, on the wire).
        package var crc32c: UInt32
        /// SHA-256 of the file's bytes: the chunk's and the whole object's.
        package var sha256: Digest32
        /// The Merkle root over the one chunk hash.
        package var merkleRoot: Digest32
        /// The commitment-chain head: the one chunk's link.
        package var chainHead: Digest32

        /// A file.
        package init(
            create: NativeCreateRequest, crc32c: UInt32, sha256: Digest32, merkleRoot: Digest32, chainHead: Digest32
        ) {
            self.create = create
            self.crc32c = crc32c
            self.sha256 = sha256
            self.merkleRoot = merkleRoot
            self.chainHead = chainHead
        }

        /// The rules of section 3.10 beyond the creation's own: one chunk of a known size, no parity, and a content id, when given, that names these bytes.
        package func validate(path: String = "") throws(AetherProtocolError) {
            let member = { (name: String) in path.isEmpty ? name : path + "." + name }
            try create.validate()
            guard !create.sizeDeferred, create.chunks == 1, create.parity == nil else {
                throw AetherProtocolError(
                    .inconsistent, member: member("create"),
                    "a batched file is one chunk of a known size without parity")
            }
            if let contentID = create.contentID, contentID != ACI(digest: sha256).description {
                throw AetherProtocolError(
                    .inconsistent, member: member("create.contentID"), "contentID does not name the file's sha256")
            }
        }

        var jsonValue: JSONValue {
            .object([
                "chainHead": .string(chainHead.hex),
                "crc32c": JSONObjectReader.base64Value([24, 16, 8, 0].map { UInt8(truncatingIfNeeded: crc32c >> $0) }),
                "create": create.jsonValue, "merkleRoot": .string(merkleRoot.hex), "sha256": .string(sha256.hex),
            ])
        }
    }

    /// The files, in the order of their bytes in the body.
    package var files: [File]

    /// A batch.
    package init(files: [File]) { self.files = files }

    /// The bytes of the files the body carries after the document.
    package var fileBytes: Int64 { files.reduce(0) { $0 + $1.create.size } }

    /// Parses and validates a document (at most `AetherWire.maximumBatchDocumentBytes`, 1 ... `maximumBatchFiles`
    /// files).
    package init(json bytes: some Collection<UInt8>) throws(AetherProtocolError) {
        let reader = try JSONObjectReader(
            JSONValue.parse(bytes, limit: AetherWire.maximumBatchDocumentBytes), allowed: ["files"])
        guard case .array(let entries) = try reader.required("files") else {
            throw reader.wrongType("files", "an array")
        }
        guard (1...AetherWire.maximumBatchFiles).contains(entries.count) else {
            throw AetherProtocolError(
                .outOfRange, member: "files", "a batch holds 1...\(AetherWire.maximumBatchFiles) files")
        }
        var files: [File] = []
        for (index, entry) in entries.enumerated() {
            let path = "files[\(index)]"
            let file = try JSONObjectReader(
                entry, path: path, allowed: ["chainHead", "crc32c", "create", "merkleRoot", "sha256"])
            let crc = try file.base64("crc32c", maximumBytes: 4)
            guard crc.count == 4 else {
                throw AetherProtocolError(.malformed, member: file.name("crc32c"), "crc32c is not 4 bytes")
            }
            let parsed = File(
                create: try NativeCreateRequest(value: try file.required("create"), path: file.name("create")),
                crc32c: crc.reduce(UInt32(0)) { $0 << 8 | UInt32($1) }, sha256: try file.digest("sha256"),
                merkleRoot: try file.digest("merkleRoot"), chainHead: try file.digest("chainHead"))
            try parsed.validate(path: path)
            files.append(parsed)
        }
        self.files = files
    }

    /// The canonical document.
    package var jsonBytes: [UInt8] { JSONValue.object(["files": .array(files.map(\.jsonValue))]).canonicalBytes }
}

/// `Aether-Batch` (section 3.10): `files=N, document=L`, the number of files and the document's length in bytes,
/// so a receiver refuses a batch over its limits before reading the body.
package struct AetherBatchHeader: Sendable, Hashable {
    /// The files in the batch.
    package var files: Int
    /// The document's bytes at the start of the body.
    package var document: Int

    /// A value.
    package init(files: Int, document: Int) {
        self.files = files
        self.document = document
    }

    /// Parses a field value; unknown members are refused.
    package init(parsing value: String) throws(AetherProtocolError) {
        let members = try AetherHeaderMembers(value, field: AetherWire.batchField)
        try members.refuseUnknown(["document", "files"])
        files = Int(try members.integer("files", 1...Int64(AetherWire.maximumBatchFiles)))
        document = Int(try members.integer("document", 2...Int64(AetherWire.maximumBatchDocumentBytes)))
    }

    /// The field value.
    package var fieldValue: String {
        StructuredField.serialize(dictionary: [
            ("files", .integer(Int64(files))), ("document", .integer(Int64(document))),
        ]) ?? ""
    }
}

/// The answer to a batch (section 3.10), `application/aether-batch-receipt+json`: one entry per file of the request,
/// in its order, either the file's receipt (section 3.8) and its upload's location, or the problem that stopped it.
package struct NativeBatchAnswer: Sendable, Hashable {
    /// How one file ended.
    package enum Result: Sendable, Hashable {
        /// Stored and complete: the upload's location and its receipt.
        case stored(location: String, receipt: NativeReceipt)
        /// Not stored (nothing of it is visible): why.
        case failed(ProblemDocument)
    }

    /// One result per file of the request.
    package var files: [Result]

    /// An answer.
    package init(files: [Result]) { self.files = files }

    /// Parses and checks a body (at most `AetherWire.maximumBatchAnswerBytes`).
    package init(json bytes: some Collection<UInt8>) throws(AetherProtocolError) {
        let reader = try JSONObjectReader(
            JSONValue.parse(bytes, limit: AetherWire.maximumBatchAnswerBytes), allowed: ["files"])
        guard case .array(let entries) = try reader.required("files") else {
            throw reader.wrongType("files", "an array")
        }
        guard entries.count <= AetherWire.maximumBatchFiles else {
            throw AetherProtocolError(
                .outOfRange, member: "files", "a batch answer holds at most \(AetherWire.maximumBatchFiles) files")
        }
        var files: [Result] = []
        for (index, entry) in entries.enumerated() {
            let file = try JSONObjectReader(
                entry, path: "files[\(index)]", allowed: ["location", "problem", "receipt"])
            if let problem = file.optional("problem") {
                guard file.optional("receipt") == nil, file.optional("location") == nil else {
                    throw AetherProtocolError(
                        .inconsistent, member: file.name("problem"), "a file has a problem or a receipt, not both")
                }
                files.append(.failed(try ProblemDocument(value: problem, path: file.name("problem"))))
            } else {
                let location = try file.string("location", maximumBytes: 2048)
                guard !location.isEmpty else {
                    throw AetherProtocolError(.malformed, member: file.name("location"), "location is empty")
                }
                files.append(
                    .stored(
                        location: location,
                        receipt: try NativeReceipt(value: try file.required("receipt"), path: file.name("receipt"))))
            }
        }
        self.files = files
    }

    /// The canonical body.
    package var jsonBytes: [UInt8] {
        let entries: [JSONValue] = files.map { result in
            switch result {
            case .stored(let location, let receipt):
                .object(["location": .string(location), "receipt": receipt.jsonValue])
            case .failed(let problem): .object(["problem": problem.jsonValue])
            }
        }
        return JSONValue.object(["files": .array(entries)]).canonicalBytes
    }
}
