import Testing

@testable import AetherUploader

@Suite struct FeatureFlagsTests {
    @Test func everyFeatureIsOnByDefault() throws {
        let flags = FeatureFlags.defaults
        #expect(flags.parity && flags.byzantineSampling && flags.dedup && flags.adaptiveChunking && flags.compression)
        #expect(try FeatureFlags(parsing: "") == .defaults)
    }

    @Test(arguments: FeatureFlags.Flag.allCases)
    func eachFeatureTurnsOffAloneAndBackOn(_ flag: FeatureFlags.Flag) throws {
        let off = try FeatureFlags(parsing: "-" + flag.rawValue)
        #expect(!off.isEnabled(flag))
        #expect(off.enabled == Set(FeatureFlags.Flag.allCases).subtracting([flag]))
        #expect(try FeatureFlags(parsing: "-\(flag.rawValue),\(flag.rawValue)") == .defaults)
        #expect(try FeatureFlags(parsing: "-\(flag.rawValue),+\(flag.rawValue)") == .defaults)
    }

    @Test func theNamedPropertiesReadAndWriteTheirOwnFlag() throws {
        var flags = try FeatureFlags(parsing: "-parity,-byzantine-sampling,-dedup,-adaptive-chunking,-compression")
        #expect(flags.enabled.isEmpty)
        flags.parity = true
        #expect(flags.enabled == [.parity])
        flags.byzantineSampling = true
        flags.dedup = true
        #expect(flags.enabled == [.parity, .byzantineSampling, .dedup])
        flags.adaptiveChunking = true
        flags.compression = true
        #expect(flags == .defaults)
        flags.compression = false
        #expect(flags.description == "+parity,+byzantine-sampling,+dedup,+adaptive-chunking,-compression")
        #expect(try FeatureFlags(parsing: flags.description) == flags)
    }

    @Test(arguments: ["paritee", "-Parity", "compression,zstd", "+", "dedup,,parity", ",", "-", " dedup"])
    func aBadListIsATypedError(_ list: String) {
        let error = #expect(throws: UploaderError.self) { try FeatureFlags(parsing: list) }
        let expected: UploaderError.Code =
            list.split(separator: ",", omittingEmptySubsequences: false).contains { $0 == "" || $0 == "+" || $0 == "-" }
            ? .invalidArgument : .unknownFeatureFlag
        #expect(error?.code == expected)
    }
}
