/// Helpers that make `Decodable` conformances reject what the default synthesis would let through.
enum StrictCoding {
    /// A key that accepts any name, to list every field a JSON object really has.
    private struct AnyKey: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }

    /// Throws when the object being decoded has a field outside `allowed` (a typo or another format's field).
    static func requireExactKeys(
        _ decoder: any Decoder, _ allowed: [some CodingKey], code: IntegrityError.Code
    ) throws {
        let names = Set(allowed.map(\.stringValue))
        let container = try decoder.container(keyedBy: AnyKey.self)
        for key in container.allKeys where !names.contains(key.stringValue) {
            throw IntegrityError(code, "unexpected field \"\(key.stringValue)\"")
        }
    }
}
