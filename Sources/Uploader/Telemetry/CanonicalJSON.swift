import Foundation

/// The one canonical JSON form of the Uploader's telemetry (upload-engine v2.2: Codable and JSONEncoder with
/// sorted keys, never string concatenation): keys sorted (every key is ASCII), no whitespace, `/` not escaped,
/// absent optionals left out. Values that must compare byte for byte (traces, audit entries) hold integers,
/// booleans and strings only.
public enum CanonicalJSON {
    /// The canonical bytes of `value`.
    public static func encode(_ value: some Encodable) throws(UploaderError) -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        do {
            return Array(try encoder.encode(value))
        } catch {
            throw UploaderError(.invalidArgument, "a telemetry value cannot be encoded as JSON")
        }
    }

    /// The canonical bytes of `value` and a line feed: one JSON line.
    public static func line(_ value: some Encodable) throws(UploaderError) -> [UInt8] {
        try encode(value) + [0x0a]
    }

    /// Decodes one JSON value (a line feed at the end is allowed); `.invalidArgument` when it does not parse.
    public static func decode<T: Decodable>(_ type: T.Type, from bytes: some Collection<UInt8>) throws(UploaderError)
        -> T
    {
        do {
            return try JSONDecoder().decode(type, from: Data(bytes))
        } catch {
            throw UploaderError(.invalidArgument, "a telemetry line is not the expected JSON")
        }
    }
}
