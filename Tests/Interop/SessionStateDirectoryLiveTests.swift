import AetherIO
import AetherSecurity
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// `--state-dir` is bytes from `argv` to the system calls: a state directory whose name is not UTF-8 is used
/// as it is by `pair`, `retire`, `refuse` and `host`, never repaired into another name (U+FFFD).
@Suite struct SessionStateDirectoryLiveTests {
    /// The names in `directory` as raw bytes (FileManager would decode them).
    private func entries(_ directory: FilePath) throws -> [[UInt8]] {
        guard let stream = unsafe directory.withCString({ unsafe opendir($0) }) else {
            throw SessionLive.Failure(description: "cannot list \(directory): errno \(errno)")
        }
        defer { _ = unsafe closedir(stream) }
        var names: [[UInt8]] = []
        while let entry = unsafe readdir(stream) {
            let name = unsafe withUnsafeBytes(of: &entry.pointee.d_name) { raw in unsafe Array(raw.prefix { $0 != 0 }) }
            if name != [0x2E] && name != [0x2E, 0x2E] { names.append(name) }
        }
        return names.sorted { $0.lexicographicallyPrecedes($1) }
    }

    @Test func pairingRetiringAndRefusingUseAStateDirectoryWhoseNameIsNotUTF8() throws {
        let directory = try SessionLive.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let hostID = HostID()
        // `state-\xFF\xFE`: both bytes become U+FFFD in a String, so a lossy path would name another directory.
        // HOME and XDG_STATE_HOME point into the scratch directory, so a state that went to the default place
        // would be seen there too.
        let script = """
            set -e
            export HOME="$PWD/home" XDG_STATE_HOME="$PWD/xdg"
            d=$(printf 'state-\\377\\376')
            first=$("$AETHER" session pair --host-id \(hostID.hex) --state-dir "$d" | sed -n 's/.* key=\\([0-9a-f]*\\) .*/\\1/p')
            second=$("$AETHER" session pair --host-id \(hostID.hex) --state-dir "$d" | sed -n 's/.* key=\\([0-9a-f]*\\) .*/\\1/p')
            test -n "$first" && test -n "$second"
            "$AETHER" session retire --key-id "$first" --state-dir "$d"
            "$AETHER" session refuse --key-id "$second" --state-dir "$d"
            echo "first=$first second=$second"
            # The host reads its keys and tombstones from the same directory; it runs until it says so.
            "$AETHER" session host --port 0 --state-dir "$d" 2> host.log & host=$!
            tries=0
            until grep -q listening host.log; do
                tries=$((tries + 1)); test $tries -lt 400 || { kill $host; cat host.log; exit 7; }; sleep 0.05
            done
            kill $host; wait $host || true
            cat host.log; rm host.log
            """
        let (status, output, error) = try FileSafetyLiveTests.shell(script, in: directory)
        #expect(status == 0, "\(output) \(error)")
        let ids = output.split(separator: "\n").first { $0.hasPrefix("first=") }?.split(separator: " ")
        let first = try KeyID(hex: String(try #require(ids?.first).dropFirst("first=".count)))
        let second = try KeyID(hex: String(try #require(ids?.last).dropFirst("second=".count)))
        #expect(output.contains("retired key \(first.hex)"))
        #expect(output.contains("refused key \(second.hex)"))
        #expect(output.contains("with 2 key(s)"), "\(output)")

        // Exactly one entry was made, with exactly these bytes: nothing in a repaired name, nothing in the
        // default places.
        let root = FilePath(directory)
        let stateName = Array("state-".utf8) + [0xFF, 0xFE]
        #expect(try entries(root) == [stateName])
        let state = root.appending(try FilePath(bytes: stateName))
        #expect(try entries(state) == [Array("host".utf8), Array("keys".utf8)])
        #expect(try entries(state.appending("host")) == [Array("keys".utf8), Array("tombstones".utf8)])
        let itemName = Array(FileKeyStore.fileName(for: hostID).utf8)
        #expect(try entries(state.appending("keys")) == [itemName])
        #expect(try entries(state.appending("host/keys")) == [itemName])

        // What landed there is what the commands did.
        let device = try #require(try FileKeyStore(directory: state.appending("keys")).load(hostID: hostID))
        #expect(Set(device.keys.map(\.id)) == [first, second])
        let host = try #require(try FileKeyStore(directory: state.appending("host/keys")).load(hostID: hostID))
        #expect(host.keys.first { $0.id == second }?.state == .unlisted)
        let tombstones = try TombstoneFile(path: state.appending("host/tombstones")).load()
        #expect(tombstones.contains(first))
        #expect(!tombstones.contains(second))
    }
}
