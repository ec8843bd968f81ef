import AetherIO
public import AetherIntegrity

extension CaptureManifest {
    /// The manifest of `files` (sorted here by their paths' bytes).
    public init(_ files: [CaptureFileResult]) throws(IntegrityError) {
        let sorted = files.sorted { $0.relativePath.lexicographicallyPrecedes($1.relativePath) }
        var tree = StreamingMerkleTree()
        for file in sorted {
            try tree.append(
                Self.leaf(file.relativePath, size: file.size, sha256: file.sha256, merkleRoot: file.merkleRoot))
        }
        self.init(
            sortedFiles: sorted.map {
                Entry(
                    path: $0.path, size: $0.size, sha256: $0.sha256.hex, merkleRoot: $0.merkleRoot.hex,
                    location: $0.location)
            }, root: tree.root)
    }
}
