import AetherIO
import AetherSecurity

/// The record open path (`RecordOpener.open`, what `SessionChannel.opener` runs on every datagram) with
/// a fixed key. The input is a script of datagrams: a genuine sealed record (counters 0 ... 4,199, sealed
/// once at start), a genuine record with flipped bytes, truncated or extended, or raw bytes.
/// Properties: no crash; only byte-exact genuine records open (never a forged or damaged tag); a genuine
/// record opens exactly when the replay rule of docs/SECURE-SESSION.md (modelled here) accepts it, with
/// the content it was sealed with; a failed open leaves the window unchanged (its highest counter, and
/// every later verdict, still match the model); a refused genuine record is `.replayDetected`.
func fuzzInput(_ bytes: UnsafeRawBufferPointer) {
    guard let fixture = Fixture.shared else { FuzzCheck.fail("cannot set up the record fixture") }
    var cursor = FuzzCursor(unsafe Array(bytes))
    var opener = fixture.makeOpener()
    var model = WindowModel()
    var operations = 0
    while !cursor.isEmpty, operations < 256 {
        operations += 1
        let datagram = fixture.datagram(&cursor)
        let highestBefore = opener.window.highest
        let genuine = fixture.index[datagram]
        let result: Result<RecordContent, SecurityError>
        do { result = .success(try opener.open(datagram)) } catch { result = .failure(error) }
        switch (result, genuine) {
        case (.success, nil):
            FuzzCheck.fail("a datagram that was never sealed opened")
        case (.success(let content), let counter?):
            FuzzCheck.require(model.accepts(UInt64(counter)), "counter \(counter) opened against the replay rule")
            FuzzCheck.require(content == fixture.contents[counter], "counter \(counter) opened to other content")
            model.mark(UInt64(counter))
            FuzzCheck.accepted("record \(counter)")
        case (.failure(let error), let counter?):
            FuzzCheck.require(!model.accepts(UInt64(counter)), "genuine counter \(counter) refused: \(error)")
            FuzzCheck.require(error.code == .replayDetected, "a genuine record refused as \(error.code)")
        case (.failure(let error), nil):
            FuzzCheck.require(
                [.malformedMessage, .replayDetected, .authenticationFailed].contains(error.code),
                "a bad datagram refused as \(error.code)")
        }
        if case .failure = result {
            FuzzCheck.require(opener.window.highest == highestBefore, "a failed open moved the window")
        }
        FuzzCheck.require(opener.window.highest == model.highest, "the window's highest counter left the model")
    }
}

/// The replay rule as docs/SECURE-SESSION.md states it: counter c is accepted iff c < 2^32, it was not
/// accepted before, and nothing was accepted yet or c > last or last - c < 4096.
private struct WindowModel {
    var accepted: Set<UInt64> = []
    var highest: UInt64?

    func accepts(_ counter: UInt64) -> Bool {
        guard counter < 1 << 32, !accepted.contains(counter) else { return false }
        guard let highest else { return true }
        return counter > highest || highest - counter < 4_096
    }

    mutating func mark(_ counter: UInt64) {
        accepted.insert(counter)
        highest = max(highest ?? counter, counter)
    }
}

/// Genuine records sealed once under a fixed key, and how the script turns bytes into datagrams.
private final class Fixture: Sendable {
    static let shared: Fixture? = try? Fixture()
    static let sessionID: UInt64 = 0x0102_0304_0506_0708
    static let recordCount = 4_200

    let key: SymmetricKey
    let records: [[UInt8]]
    let contents: [RecordContent]
    let index: [[UInt8]: Int]

    init() throws(SecurityError) {
        key = try SymmetricKey(secureBytes: SecureBytes(copying: (0..<32).map { UInt8($0 * 7 + 1) }))
        var sealer = try RecordSealer(key: key, direction: .clientToHost, sessionID: Self.sessionID)
        var records: [[UInt8]] = []
        var contents: [RecordContent] = []
        for counter in 0..<Self.recordCount {
            // Every class of inner type: application data, known control, malformed control, unknown control.
            let (type, body): (UInt8, [UInt8]) =
                switch counter % 5 {
                case 0: (0x01, [UInt8(truncatingIfNeeded: counter), UInt8(truncatingIfNeeded: counter >> 8)])
                case 1: (0x40, [])
                case 2: (0x41, [0x00])
                case 3: (0x42, [0x01, 0x02])
                default: (0x7f, [0xaa])
                }
            records.append(try sealer.seal(innerType: type, plaintext: body))
            contents.append(RecordContent(innerType: type, plaintext: body))
        }
        self.records = records
        self.contents = contents
        index = Dictionary(uniqueKeysWithValues: records.enumerated().map { ($1, $0) })
    }

    func makeOpener() -> RecordOpener {
        // The same arguments succeeded in `init` for the sealer.
        guard let opener = try? RecordOpener(key: key, direction: .clientToHost, sessionID: Self.sessionID) else {
            FuzzCheck.fail("cannot make the opener")
        }
        return opener
    }

    /// One operation: a genuine record, a damaged one, a truncated or extended one, or raw bytes.
    func datagram(_ cursor: inout FuzzCursor) -> [UInt8] {
        let operation = cursor.u8()
        let record = records[Int(cursor.u16()) % records.count]
        switch operation & 3 {
        case 0: return record
        case 1:
            var damaged = record
            let position = Int(cursor.u8()) % damaged.count
            damaged[position] ^= max(cursor.u8(), 1)
            return damaged
        case 2:
            let change = Int(cursor.u8())
            return change < 128 ? Array(record.dropLast(change % record.count + 1)) : record + cursor.take(change - 127)
        default:
            let count = Int(cursor.u8())
            return cursor.take(count)
        }
    }
}
