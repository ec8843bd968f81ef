import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A Python peer from `Tests/Interop/peers` that serves for the whole test process: it prints one JSON line once it
/// listens (its ports), may then answer one JSON line per JSON line it reads, and exits when its stdin closes, which
/// happens when this object goes (keep it for as long as the peer should serve) or at the latest when this process
/// exits. Its stderr goes to a file, quoted when it exits too early.
final class LongRunningPeer: @unchecked Sendable {
    // @unchecked: everything is set once in init; `buffered`, the pipes' traffic and `errorLog` are used only
    // under `lock`.
    let script: String
    private let process: Process
    private let input = Pipe()
    private let output = Pipe()
    /// The peer's stderr: a temporary file, already unlinked, so nothing is left behind.
    private let errorLog: FileHandle
    private let lock = NSLock()
    private var buffered = Data()

    /// Starts `peers/SCRIPT` with `arguments` and decodes the first line it prints as `First`.
    /// Throws when the venv is missing, or the peer exits or prints something else first.
    static func start<First: Decodable>(
        _ script: String, _ arguments: [String] = [], announcing: First.Type
    ) throws -> (peer: LongRunningPeer, first: First) {
        let peer = try LongRunningPeer(script, arguments)
        return (peer, try peer.readLine(as: First.self))
    }

    /// Starts `peers/SCRIPT` with `arguments`; its first line names the ports it listens on, `{"name": port, ...}`.
    static func startListening(_ script: String, _ arguments: [String] = []) throws -> (
        peer: LongRunningPeer, ports: Ports
    ) {
        let (peer, ports) = try start(script, arguments, announcing: [String: UInt16].self)
        return (peer, Ports(script: script, byName: ports))
    }

    /// The ports a peer announced.
    struct Ports {
        let script: String
        let byName: [String: UInt16]

        /// The port named `name`; an error when the peer announced none by that name.
        func port(_ name: String) throws -> UInt16 {
            guard let port = byName[name] else {
                throw PythonPeer.PeerError(message: "\(script) announced no port \"\(name)\" in \(byName)")
            }
            return port
        }
    }

    /// A new empty directory for a peer's files, `aether-NAME-peer-PID-UUID` in the temporary directory.
    static func makeDirectory(_ name: String) throws -> URL {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "aether-\(name)-peer-\(getpid())-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        return directory
    }

    private init(_ script: String, _ arguments: [String]) throws {
        process = try PythonPeer.process(script, arguments)
        self.script = script
        let errorPath = FileManager.default.temporaryDirectory.appendingPathComponent(
            "aether-\(script)-\(getpid())-\(UUID().uuidString).stderr"
        ).path
        guard FileManager.default.createFile(atPath: errorPath, contents: nil),
            let errorFile = FileHandle(forWritingAtPath: errorPath),
            let errorLog = FileHandle(forReadingAtPath: errorPath)
        else { throw PythonPeer.PeerError(message: "cannot create \(errorPath) for the stderr of \(script)") }
        self.errorLog = errorLog
        try FileManager.default.removeItem(atPath: errorPath)
        process.standardInput = input
        process.standardOutput = output
        process.standardError = errorFile
        try process.run()
        try errorFile.close()
    }

    /// Sends `command` as one JSON line and decodes the one line the peer answers.
    func request<Answer: Decodable>(_ command: [String: String], as: Answer.Type) throws -> Answer {
        try lock.withLock {
            var line = try JSONSerialization.data(withJSONObject: command)
            line.append(UInt8(ascii: "\n"))
            input.fileHandleForWriting.write(line)
            return try decodeLocked(Answer.self)
        }
    }

    private func readLine<Value: Decodable>(as: Value.Type) throws -> Value {
        try lock.withLock { try decodeLocked(Value.self) }
    }

    /// The next line, decoded; called under `lock`.
    private func decodeLocked<Value: Decodable>(_: Value.Type) throws -> Value {
        let line = try nextLineLocked()
        do {
            return try JSONDecoder().decode(Value.self, from: line)
        } catch {
            let text = String(decoding: line.prefix(500), as: UTF8.self)
            throw PythonPeer.PeerError(message: "\(script) printed \(text), not a \(Value.self): \(error)")
        }
    }

    /// The next line without its newline; called under `lock`. Blocks until the peer prints a whole line or exits.
    private func nextLineLocked() throws -> Data {
        while true {
            if let end = buffered.firstIndex(of: UInt8(ascii: "\n")) {
                let line = Data(buffered[buffered.startIndex..<end])
                buffered = Data(buffered[buffered.index(after: end)...])
                return line
            }
            let data = output.fileHandleForReading.availableData
            if data.isEmpty {
                throw PythonPeer.PeerError(message: "\(script) exited before it answered; its stderr: \(stderrTail)")
            }
            buffered.append(data)
        }
    }

    /// The last part of the peer's stderr (a Python traceback when it failed to start); called under `lock`.
    private var stderrTail: String {
        do {
            try errorLog.seek(toOffset: 0)
            return String(decoding: try errorLog.readToEnd()?.suffix(2000) ?? Data(), as: UTF8.self)
        } catch {
            return "(unreadable: \(error))"
        }
    }
}
