import Testing

@testable import AetherTransport

/// `TransportMode`'s names as the command line prints and parses them.
@Suite struct TransportModeTests {
    @Test(arguments: [
        (TransportMode.native, "native"), (.ietfResumable, "ietf"), (.tus, "tus"), (.s3Multipart, "s3"),
    ])
    func eachModePrintsItsNameAndParsesBackFromIt(mode: TransportMode, name: String) throws {
        #expect(mode.description == name)
        #expect(try TransportMode(name: name) == mode)
        #expect(try TransportMode(name: name.uppercased()) == mode)
    }

    @Test func everyModeHasADistinctName() {
        #expect(Set(TransportMode.allCases.map(\.description)).count == TransportMode.allCases.count)
    }

    @Test(arguments: ["", "pr9Native", "ietfResumable", "s3Multipart", "http", "tus ", " native", "s3\u{0}"])
    func anyOtherNameIsAnInvalidArgument(name: String) {
        #expect(throws: TransportError.self) { try TransportMode(name: name) }
        do {
            _ = try TransportMode(name: name)
        } catch {
            #expect(error.code == .invalidArgument)
            #expect(error.message.contains("native, ietf, tus, s3"))
        }
    }

    @Test func httpServersArePreferredNativeThenIETFThenTus() {
        #expect(TransportMode.httpPreference == [.native, .ietfResumable, .tus])
    }
}
