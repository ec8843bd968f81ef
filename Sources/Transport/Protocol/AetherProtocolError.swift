/// The error of the native protocol's wire definitions (`docs/PROTOCOL.md` sections 2, 3 and 7): a header or a
/// JSON document that does not parse or breaks a rule, or a content coding that fails. The code says what kind of
/// fault, `member` names the header member or JSON member at fault when there is one, so a receiver can answer
/// `400 malformed-request` (or `413 too-large` for `.tooLarge` and `.decodedTooLarge`) naming it.
///
/// Messages name members and limits, never the values of tokens, keys or file contents.
package struct AetherProtocolError: Error, Sendable, CustomStringConvertible {
    /// What went wrong, as a value callers can compare. New codes do not break callers.
    package struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Base: Hashable, Sendable {
            case malformed, unknownMember, missingMember, wrongType, outOfRange, inconsistent, tooLarge
            case decodedTooLarge, corruptEncoding, truncatedEncoding, codingFailed, versionUnsupported
        }
        private let base: Base
        private init(_ base: Base) { self.base = base }
        /// The text is not a Structured Field, not JSON, or not in the form the document requires.
        package static let malformed = Code(.malformed)
        /// A JSON object has a member the document does not define.
        package static let unknownMember = Code(.unknownMember)
        /// A required member is absent.
        package static let missingMember = Code(.missingMember)
        /// A member has another type than the document defines.
        package static let wrongType = Code(.wrongType)
        /// A number, a length or a count is outside its stated range.
        package static let outOfRange = Code(.outOfRange)
        /// Members that must agree do not (`chunks` and `size`, a bitmap's length and its count, ...).
        package static let inconsistent = Code(.inconsistent)
        /// The document or field is longer than the limit checked before parsing.
        package static let tooLarge = Code(.tooLarge)
        /// A content decoder would produce more bytes than its limit (a decompression bomb, or a chunk longer than
        /// its declared length). Decoding stopped before the limit was passed.
        package static let decodedTooLarge = Code(.decodedTooLarge)
        /// The coded bytes are not a valid zstd frame or zlib stream.
        package static let corruptEncoding = Code(.corruptEncoding)
        /// The coded bytes ended before the frame or stream did.
        package static let truncatedEncoding = Code(.truncatedEncoding)
        /// The compression library failed for a reason other than the input (out of memory).
        package static let codingFailed = Code(.codingFailed)
        /// A document of another version than this code speaks (a spot check of version 1, with no `"v":2`).
        package static let versionUnsupported = Code(.versionUnsupported)
        package var description: String { "\(base)" }
    }

    /// The error's code.
    package let code: Code
    /// The header member or JSON member at fault (`"chunkSize"`, `"parity.data"`, `"sha-256"`), when there is one.
    package let member: String?
    /// A message for people.
    package let message: String
    /// Source location that threw.
    package let location: String

    /// Creates an error; `location` defaults to the caller's file and line.
    package init(
        _ code: Code, member: String? = nil, _ message: String, file: StaticString = #fileID, line: UInt = #line
    ) {
        self.code = code
        self.member = member
        self.message = message
        self.location = "\(file):\(line)"
    }

    package var description: String {
        if let member { return "AetherProtocolError(\(code), \(member)): \(message)" }
        return "AetherProtocolError(\(code)): \(message)"
    }
}
