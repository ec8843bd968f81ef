import Testing

@testable import AetherIO

@Suite struct DomainTagTests {
    @Test func everyConstantTagIsValidAndDistinct() {
        #expect(DomainTag.allConstants.allSatisfy { DomainTag.isValid($0.bytes) })
        #expect(Set(DomainTag.allConstants).count == DomainTag.allConstants.count)
    }

    @Test(arguments: ["", "naïve", "tag\u{0}", "tab\tbed", "emoji🙂", String(repeating: "a", count: 256)])
    func aRuntimeTagThatIsEmptyOrNotPrintableASCIIThrows(text: String) {
        let error = #expect(throws: IOError.self) { try DomainTag(validating: text) }
        #expect(error?.code == .invalidDomainTag)
    }

    @Test func anInvalidTagLiteralIsAProgrammerErrorThatStopsTheProcess() async {
        await #expect(processExitsWith: .failure) { _ = DomainTag(constant: "") }
        await #expect(processExitsWith: .failure) { _ = DomainTag(constant: "caf\u{e9}") }
    }

    @Test func aValidRuntimeTagEqualsTheSameConstant() throws {
        #expect(try DomainTag(validating: "aether/merkle-leaf/v1") == DomainTag.merkleLeaf)
    }

    @Test func differentTagsSeparateTheSameMessage() {
        let message: [UInt8] = [1, 2, 3]
        #expect(DomainTag.merkleLeaf.hash(message) != DomainTag.merkleNode.hash(message))
        // Length-prefixed: "ab" + "c..." cannot collide with "a" + "bc...".
        let ab = DomainTag(constant: "ab")
        let a = DomainTag(constant: "a")
        #expect(ab.hash(Array("c".utf8)) != a.hash(Array("bc".utf8)))
        #expect(DomainTag.merkleLeaf.hash(message) == SHA256.hash([21] + Array("aether/merkle-leaf/v1".utf8) + message))
    }
}
