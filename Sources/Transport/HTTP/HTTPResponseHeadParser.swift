/// Builds the response head from the header lines libcurl hands over one by one: status lines ("HTTP/1.1 104
/// Upload Resumption Supported", "HTTP/2 200"), fields, and the empty line that ends each block. Every 1xx block
/// is kept as an informational response; the first block with a status of 200 or more is the final one
/// (trailer lines after it are ignored). The byte count of all lines is capped.
struct HTTPResponseHeadParser {
    enum Outcome: Equatable {
        case accepted
        case tooLarge
        case tooManyInformational
        case malformed(String)
    }

    /// The most 1xx answers taken before the final one: more is a server that never answers (a 100 or 104 sent
    /// again and again), refused rather than waited out.
    static let maximumInformational = 32

    let limit: Int
    private(set) var bytes = 0
    private(set) var informational: [HTTPInformationalResponse] = []
    private(set) var finalStatus: Int?
    private(set) var finalHeaders = HTTPHeaders()
    private var currentStatus: Int?
    private var currentHeaders = HTTPHeaders()
    private var finalComplete = false

    init(limit: Int) { self.limit = limit }

    /// The final status and fields once the final block has ended.
    var head: (status: Int, headers: HTTPHeaders)? {
        guard finalComplete, let finalStatus else { return nil }
        return (finalStatus, finalHeaders)
    }

    mutating func consume(line raw: some Collection<UInt8>) -> Outcome {
        bytes += raw.count
        guard bytes <= limit else { return .tooLarge }
        if finalComplete { return .accepted }  // trailers
        var line = Array(raw)
        while let last = line.last, last == 0x0A || last == 0x0D { line.removeLast() }
        if line.isEmpty {
            guard let status = currentStatus else { return .malformed("a header block without a status line") }
            if status < 200 {
                guard informational.count < Self.maximumInformational else { return .tooManyInformational }
                informational.append(HTTPInformationalResponse(status: status, headers: currentHeaders))
            } else {
                finalStatus = status
                finalHeaders = currentHeaders
                finalComplete = true
            }
            currentStatus = nil
            currentHeaders = HTTPHeaders()
            return .accepted
        }
        if line.starts(with: Array("HTTP/".utf8)) {
            guard currentStatus == nil else { return .malformed("a status line inside a header block") }
            guard let status = Self.status(line) else { return .malformed("an unreadable status line") }
            currentStatus = status
            return .accepted
        }
        guard currentStatus != nil else { return .malformed("a header field before the status line") }
        if line[0] == 0x20 || line[0] == 0x09 {
            // obs-fold (RFC 9112 section 5.2): a continuation joins the previous value with one space.
            guard let previous = currentHeaders.fields.last else { return .malformed("a continuation line first") }
            var fields = currentHeaders.fields
            fields.removeLast()
            var rebuilt = HTTPHeaders()
            for field in fields { rebuilt.add(field.name, field.value) }
            rebuilt.add(previous.name, previous.value + " " + Self.text(Self.trimmed(line[...])))
            currentHeaders = rebuilt
            return .accepted
        }
        guard let colon = line.firstIndex(of: 0x3A), colon > 0 else {
            return .malformed("a header line without a field name")
        }
        let name = line[..<colon]
        guard !name.contains(where: { $0 == 0x20 || $0 == 0x09 }) else {
            return .malformed("whitespace in a header field name")
        }
        currentHeaders.add(Self.text(name), Self.text(Self.trimmed(line[(colon + 1)...])))
        return .accepted
    }

    /// "HTTP/x[.y] NNN[ reason]" -> NNN (100...599).
    private static func status(_ line: [UInt8]) -> Int? {
        guard let space = line.firstIndex(of: 0x20) else { return nil }
        let digits = line[(space + 1)...].prefix(while: { $0 != 0x20 })
        guard digits.count == 3, digits.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else { return nil }
        let value = digits.reduce(0) { $0 * 10 + Int($1 - 0x30) }
        return (100...599).contains(value) ? value : nil
    }

    private static func trimmed(_ bytes: ArraySlice<UInt8>) -> ArraySlice<UInt8> {
        var slice = bytes
        while let first = slice.first, first == 0x20 || first == 0x09 { slice.removeFirst() }
        while let last = slice.last, last == 0x20 || last == 0x09 { slice.removeLast() }
        return slice
    }

    /// Header bytes as text: UTF-8 when valid, otherwise each byte as its Latin-1 character (never fails).
    private static func text(_ bytes: ArraySlice<UInt8>) -> String {
        if let text = String(validating: bytes, as: UTF8.self) { return text }
        return String(String.UnicodeScalarView(bytes.map { Unicode.Scalar($0) }))
    }
}
