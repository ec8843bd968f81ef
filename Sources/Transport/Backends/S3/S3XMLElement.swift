import Foundation
import FoundationXML

/// An element of an S3 XML response, parsed with Foundation's `XMLParser` (libxml2 underneath): name without
/// namespace prefix, text, children. External entities are never resolved.
struct S3XMLElement: Sendable, Equatable {
    var name: String
    var text: String
    var children: [S3XMLElement]

    /// The first child named `name`.
    func child(_ name: String) -> S3XMLElement? { children.first { $0.name == name } }

    /// Every child named `name`.
    func children(_ name: String) -> [S3XMLElement] { children.filter { $0.name == name } }

    /// The text of the first child named `name`.
    func text(_ name: String) -> String? { child(name)?.text }

    /// Parses a document; leading whitespace (S3 sends some to keep a long CompleteMultipartUpload alive) is
    /// skipped. Malformed XML or a document deeper than 32 levels is `.protocolViolation`.
    static func parse(_ bytes: [UInt8]) throws(TransportError) -> S3XMLElement {
        let start = bytes.firstIndex { $0 != 0x20 && $0 != 0x09 && $0 != 0x0A && $0 != 0x0D } ?? bytes.count
        guard start < bytes.count else { throw TransportError(.protocolViolation, "the S3 response body is empty") }
        // S3 never sends a document type; refusing one rules out entity expansion of any kind.
        let body = bytes[start...]
        for marker in ["<!DOCTYPE", "<!ENTITY"] where Self.contains(body, Array(marker.utf8)) {
            throw TransportError(.protocolViolation, "the S3 response declares a document type or entity")
        }
        let parser = XMLParser(data: Data(bytes[start...]))
        parser.shouldResolveExternalEntities = false
        parser.shouldProcessNamespaces = true
        let builder = Builder()
        parser.delegate = builder
        guard parser.parse(), builder.failure == nil, let root = builder.root else {
            throw TransportError(
                .protocolViolation,
                "the S3 response is not well-formed XML" + (builder.failure.map { ": \($0)" } ?? ""))
        }
        return root
    }

    private static func contains(_ haystack: ArraySlice<UInt8>, _ needle: [UInt8]) -> Bool {
        guard haystack.count >= needle.count else { return false }
        var index = haystack.startIndex
        while index <= haystack.endIndex - needle.count {
            if haystack[index..<index + needle.count].elementsEqual(needle) { return true }
            index += 1
        }
        return false
    }

    /// Builds the tree from parser events.
    private final class Builder: NSObject, XMLParserDelegate {
        var stack: [S3XMLElement] = []
        var root: S3XMLElement?
        var failure: String?

        func parser(
            _ parser: XMLParser, didStartElement elementName: String, namespaceURI: String?,
            qualifiedName qName: String?, attributes attributeDict: [String: String] = [:]
        ) {
            guard stack.count < 32, root == nil else {
                failure = root == nil ? "nested deeper than 32 elements" : "more than one root element"
                parser.abortParsing()
                return
            }
            stack.append(S3XMLElement(name: elementName, text: "", children: []))
        }

        func parser(_ parser: XMLParser, foundCharacters string: String) {
            guard !stack.isEmpty else { return }
            stack[stack.count - 1].text += string
        }

        func parser(
            _ parser: XMLParser, didEndElement elementName: String, namespaceURI: String?, qualifiedName qName: String?
        ) {
            guard var element = stack.popLast() else { return }
            element.text = element.text.trimmingCharacters(in: .whitespacesAndNewlines)
            if stack.isEmpty { root = element } else { stack[stack.count - 1].children.append(element) }
        }

        func parser(_ parser: XMLParser, parseErrorOccurred parseError: any Error) {
            if failure == nil { failure = "libxml2 reported a parse error" }
        }

        func parser(_ parser: XMLParser, resolveExternalEntityName name: String, systemID: String?) -> Data? {
            failure = "an external entity was referenced"
            parser.abortParsing()
            return nil
        }
    }
}
