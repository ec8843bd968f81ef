import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// CPU time of a running process, from `/proc/PID/stat`.
public enum ProcessCPU {
    /// utime + stime of `processID` in seconds, or nil when the process or its stat line is gone or malformed.
    public static func seconds(processID: Int32) -> Double? {
        guard let text = try? String(contentsOfFile: "/proc/\(processID)/stat", encoding: .utf8) else { return nil }
        return parse(statLine: text, ticksPerSecond: Double(sysconf(Int32(_SC_CLK_TCK))))
    }

    /// utime + stime from one `/proc/PID/stat` line: fields 14 and 15, counted after the `)` that closes the
    /// command name (which may itself hold spaces and parentheses), divided by the clock ticks per second.
    public static func parse(statLine: String, ticksPerSecond: Double) -> Double? {
        guard ticksPerSecond > 0, let close = statLine.lastIndex(of: ")") else { return nil }
        // After ")": field 3 (state) is the first; utime is field 14, stime field 15.
        let fields = statLine[statLine.index(after: close)...].split(separator: " ")
        guard fields.count >= 13, let user = UInt64(fields[11]), let system = UInt64(fields[12]) else { return nil }
        return Double(user + system) / ticksPerSecond
    }
}
