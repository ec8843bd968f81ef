import AetherIO
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// The tools the lab runs (`ip`, `sysctl`) and the files of the kernel it reads and writes.
enum LabCommand {
    static let ip = "/usr/sbin/ip"
    static let sysctl = "/usr/sbin/sysctl"

    /// Runs a tool to completion; its standard output, or `.commandFailed` with its standard error.
    @discardableResult
    static func run(_ arguments: [String], input: String? = nil) throws(LinkLabError) -> String {
        guard let executable = arguments.first else { throw LinkLabError(.commandFailed, "no command to run") }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = Array(arguments.dropFirst())
        let output = Pipe()
        let error = Pipe()
        let standardInput = Pipe()
        process.standardOutput = output
        process.standardError = error
        process.standardInput = standardInput
        do {
            try process.run()
        } catch {
            throw LinkLabError(.commandFailed, "cannot start \(executable): \(error)")
        }
        if let input { standardInput.fileHandleForWriting.write(Data(input.utf8)) }
        try? standardInput.fileHandleForWriting.close()
        let outputData = output.fileHandleForReading.readDataToEndOfFile()
        let errorData = error.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            let reason = String(decoding: errorData, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
            throw LinkLabError(.commandFailed, "\(arguments.joined(separator: " ")) failed: \(reason)")
        }
        return String(decoding: outputData, as: UTF8.self)
    }

    /// Reads a small kernel file (/proc/sys/...), trimmed.
    static func read(_ path: String) throws(LinkLabError) -> String {
        do {
            let descriptor = try Syscall.openReadOnly(path)
            defer { Syscall.close(descriptor) }
            let bytes = try Syscall.readAll(descriptor, limit: 1 << 20, path: path)
            return String(decoding: bytes, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        } catch {
            throw LinkLabError(.systemCall, "read \(path): \(error.message)")
        }
    }

    /// Writes a kernel setting file (/proc/sys/...).
    static func write(_ path: String, _ text: String) throws(LinkLabError) {
        do {
            let descriptor = try Syscall.open(path, flags: O_WRONLY)
            defer { Syscall.close(descriptor) }
            try Syscall.writeFully(descriptor, Array(text.utf8), path: path)
        } catch {
            throw LinkLabError(.systemCall, "write \(path): \(error.message)")
        }
    }

    /// The TCP ports in state LISTEN in a /proc/net/tcp listing.
    static func listeningPorts(procNetTCP text: String) -> Set<Int> {
        var ports: Set<Int> = []
        for line in text.split(separator: "\n").dropFirst() {
            let fields = line.split(separator: " ")
            guard fields.count > 3, fields[3] == "0A", let colon = fields[1].lastIndex(of: ":"),
                let port = Int(fields[1][fields[1].index(after: colon)...], radix: 16)
            else { continue }
            ports.insert(port)
        }
        return ports
    }
}
