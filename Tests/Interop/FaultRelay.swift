import Foundation
import Testing

/// `peers/fault_relay.py` as a child: a TCP relay on 127.0.0.1 in front of one port that counts the bytes each
/// way and, on command, resets every connection or stops answering (accepts, never replies).
final class FaultRelay: @unchecked Sendable {
    // @unchecked: used from the creating test only; the pipes are read and written one command at a time.
    struct Counters: Equatable {
        /// Bytes the clients sent toward the server.
        var up: Int64
        /// Bytes the server sent back.
        var down: Int64
        var accepted: Int
        var resets: Int
        /// Connections frozen by `freeze-after`.
        var frozen: Int
        /// Requests held by `hold-on TEXT` so far.
        var held: Int = 0
    }

    let port: Int
    private let process: Process
    private let input = Pipe()
    private let output = Pipe()
    private var buffered: [UInt8] = []

    init(targetPort: Int) throws {
        process = try PythonPeer.process("fault_relay.py", [String(targetPort)])
        process.standardInput = input
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        let first = try Self.object(Self.line(output.fileHandleForReading, &buffered))
        port = try #require(first["port"] as? Int, "fault_relay.py did not start")
    }

    /// `http://127.0.0.1:PORT` of the relay.
    var url: String { "http://127.0.0.1:\(port)" }

    /// Sends `command` (`stats`, `reset`, `reset-every S`, `blackhole`, `pass`, `reset-on TEXT`, `freeze-after N`,
    /// `hold-on TEXT`, `release`) and returns the counters after it.
    @discardableResult
    func send(_ command: String) throws -> Counters {
        input.fileHandleForWriting.write(Data((command + "\n").utf8))
        let answer = try Self.object(Self.line(output.fileHandleForReading, &buffered))
        guard let up = answer["up"] as? Int, let down = answer["down"] as? Int,
            let accepted = answer["accepted"] as? Int, let resets = answer["resets"] as? Int,
            let frozen = answer["frozen"] as? Int
        else { throw SessionLive.Failure(description: "fault_relay.py answered \(answer)") }
        return Counters(
            up: Int64(up), down: Int64(down), accepted: accepted, resets: resets, frozen: frozen,
            held: answer["held"] as? Int ?? 0)
    }

    var counters: Counters { get throws { try send("stats") } }

    deinit {
        try? input.fileHandleForWriting.close()
        process.waitUntilExit()
    }

    private static func line(_ handle: FileHandle, _ buffered: inout [UInt8]) throws -> [UInt8] {
        while true {
            if let end = buffered.firstIndex(of: UInt8(ascii: "\n")) {
                let line = Array(buffered[..<end])
                buffered.removeSubrange(...end)
                return line
            }
            let more = handle.availableData
            guard !more.isEmpty else { throw SessionLive.Failure(description: "fault_relay.py ended") }
            buffered += more
        }
    }

    private static func object(_ line: [UInt8]) throws -> [String: Any] {
        guard let object = try JSONSerialization.jsonObject(with: Data(line)) as? [String: Any] else {
            throw SessionLive.Failure(description: "fault_relay.py printed \(String(decoding: line, as: UTF8.self))")
        }
        return object
    }
}
