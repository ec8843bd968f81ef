import AetherIO
import AetherSecurity
import Foundation
import Testing

@testable import AetherTransport

/// The `aether session` commands on damaged state (issue 11, "Keys: revocation must hold"): every damage is one
/// line naming the file, fails closed, and leaves the file as it was.
@Suite(.serialized) struct SessionKeysLiveTests {
    let hostID = HostID()

    private func fingerprint(_ path: String) throws -> String {
        let attributes = try FileManager.default.attributesOfItem(atPath: path)
        let isDirectory = attributes[.type] as? FileAttributeType == .typeDirectory
        let content = isDirectory ? "directory" : Hex.encode(try Data(contentsOf: URL(fileURLWithPath: path)))
        return "\(content) \(attributes[.posixPermissions] ?? "") \(attributes[.systemFileNumber] ?? "")"
    }

    /// Damages to `host/tombstones` that once let a retired key be accepted.
    @Test(arguments: ["crlf", "upper-case", "truncated", "directory", "checksum"])
    func theHostRefusesToStartOnADamagedTombstoneList(_ damage: String) throws {
        let stateDir = try SessionLive.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: stateDir) }
        let key = try SessionLive.pair(hostID: hostID, stateDir: stateDir)
        let path = stateDir + "/host/tombstones"
        #expect(
            try SessionLive.runAether(["session", "retire", "--key-id", key.id.hex, "--state-dir", stateDir]).0 == 0)
        let line = "\(key.id.hex) 1700000000000"
        switch damage {
        case "crlf": try Data((line + "\r\n").utf8).write(to: URL(fileURLWithPath: path))
        case "upper-case": try Data((line.uppercased() + "\n").utf8).write(to: URL(fileURLWithPath: path))
        case "truncated": try Data(line.prefix(20).utf8).write(to: URL(fileURLWithPath: path))
        case "directory":
            try FileManager.default.removeItem(atPath: path)
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false)
        default:
            var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
            bytes[20] ^= 0x01
            try Data(bytes).write(to: URL(fileURLWithPath: path))
        }
        if damage != "directory" {
            try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: path)
        }
        let before = try fingerprint(path)
        let port = try SessionLive.freePort()
        let (status, _, err) = try SessionLive.runAether(
            ["session", "host", "--port", "\(port)", "--state-dir", stateDir])
        #expect(status == 1)
        #expect(err.contains("refuses to start") && err.contains(path), "\(err)")
        #expect(err.split(separator: "\n").count == 1, "\(err)")
        #expect(!err.contains("listening"))
        #expect(try fingerprint(path) == before)
        // `retire` does not overwrite it either.
        let (retire, _, retireError) = try SessionLive.runAether(
            ["session", "retire", "--key-id", key.id.hex, "--state-dir", stateDir])
        #expect(retire == 1)
        #expect(retireError.contains(path))
        #expect(try fingerprint(path) == before)
    }

    @Test func anOldTextTombstoneListStillRetiresItsKeyAndTheNextRetireConvertsIt() throws {
        let stateDir = try SessionLive.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: stateDir) }
        let retired = try SessionLive.pair(hostID: hostID, stateDir: stateDir)
        let other = try SessionLive.pair(hostID: hostID, stateDir: stateDir)
        let path = stateDir + "/host/tombstones"
        try Data("\(retired.id.hex) 1700000000000\n".utf8).write(to: URL(fileURLWithPath: path))
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: path)
        let host = try HostProcess(stateDir: stateDir)
        let log = ClientEvents()
        let client = try SessionClient.live(host: host.address, key: retired, log: log)
        try client.connect(keyID: retired.id, pending: true)
        try SessionLive.wait("the tombstone") {
            log.all.contains { if case .tombstoned(retired.id, 1_700_000_000_000) = $0 { true } else { false } }
        }
        client.stop()
        host.process.stop()
        #expect(
            try SessionLive.runAether(["session", "retire", "--key-id", other.id.hex, "--state-dir", stateDir]).0 == 0)
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        guard case .list(let list, .version1) = TombstoneFormat.parse(bytes) else {
            Issue.record("the list was not rewritten in version 1")
            return
        }
        #expect(list.keyIDs == [retired.id, other.id].sorted())
    }

    @Test func aDamagedItemOfAnotherHostDoesNotBlockRetireOrRefuse() throws {
        let stateDir = try SessionLive.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: stateDir) }
        let first = try SessionLive.pair(hostID: hostID, stateDir: stateDir)
        let second = try SessionLive.pair(hostID: hostID, stateDir: stateDir)
        // Another host's item, damaged; its name sorts before ours half of the time, so put it first always.
        let otherHost = try HostID(hex: "00000000000000000000000000000000")
        _ = try SessionLive.pair(hostID: otherHost, stateDir: stateDir)
        let damaged = stateDir + "/host/keys/\(otherHost.hex).key"
        try Data("this is not a key store item".utf8).write(to: URL(fileURLWithPath: damaged))
        let before = try fingerprint(damaged)

        let (retire, retireOut, retireError) = try SessionLive.runAether(
            ["session", "retire", "--key-id", first.id.hex, "--state-dir", stateDir])
        #expect(retire == 0, "\(retireError)")
        #expect(retireOut.contains("retired key \(first.id.hex)"))
        #expect(retireError.contains("warning") && retireError.contains(damaged))
        let (refuse, _, refuseError) = try SessionLive.runAether(
            ["session", "refuse", "--key-id", second.id.hex, "--state-dir", stateDir])
        #expect(refuse == 0, "\(refuseError)")
        #expect(refuseError.contains(damaged))
        #expect(try fingerprint(damaged) == before)
        let item = try FileKeyStore(directory: stateDir + "/host/keys").load(hostID: hostID)
        #expect(item?.keys.first { $0.id == second.id }?.state == .unlisted)
        #expect(try TombstoneFile(path: stateDir + "/host/tombstones").load().contains(first.id))
    }

    @Test func aDamagedDeviceItemMakesConnectAndPairNameTheFile() throws {
        let stateDir = try SessionLive.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: stateDir) }
        _ = try SessionLive.pair(hostID: hostID, stateDir: stateDir)
        let item = stateDir + "/keys/\(hostID.hex).key"
        var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: item)))
        bytes[40] ^= 0x01
        try Data(bytes).write(to: URL(fileURLWithPath: item))
        let before = try fingerprint(item)
        let port = try SessionLive.freePort()
        let (connect, _, connectError) = try SessionLive.runAether(
            ["session", "connect", "127.0.0.1:\(port)", "--state-dir", stateDir])
        #expect(connect == 1)
        #expect(connectError.contains(item) && connectError.contains("move it aside"), "\(connectError)")
        let (pair, _, pairError) = try SessionLive.runAether(
            ["session", "pair", "--host-id", hostID.hex, "--state-dir", stateDir])
        #expect(pair == 1)
        #expect(pairError.contains(item) && pairError.contains("checksum mismatch"), "\(pairError)")
        #expect(try fingerprint(item) == before)
        // Moved aside as the advice says, pairing works again.
        try FileManager.default.moveItem(atPath: item, toPath: item + ".damaged")
        #expect(
            try SessionLive.runAether(["session", "pair", "--host-id", hostID.hex, "--state-dir", stateDir]).0 == 0)
    }

    @Test func aMissingStateDirectoryIsAnErrorForTheHost() throws {
        let stateDir = try SessionLive.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: stateDir) }
        let missing = stateDir + "/does-not-exist"
        let port = try SessionLive.freePort()
        let (status, _, err) = try SessionLive.runAether(
            ["session", "host", "--port", "\(port)", "--state-dir", missing])
        #expect(status == 2)
        #expect(err.contains(missing) && err.contains("not an existing directory"))
        #expect(!FileManager.default.fileExists(atPath: missing))
    }
}
