/// The shared layout of Stale and TooNew: kind, then the host time (u64).
enum HostTimeRefusal {
    static func parse(_ bytes: [UInt8], kind: UInt8, structure: String) throws(SecurityError) -> UInt64 {
        var reader = WireReader(bytes, structure: structure)
        guard try reader.u8("kind") == kind else { throw reader.failure("wrong kind") }
        let hostTime = try reader.u64("host time")
        try reader.finish()
        return hostTime
    }

    static func encode(kind: UInt8, hostTime: UInt64) -> [UInt8] {
        var out: [UInt8] = [kind]
        out.appendBigEndian(hostTime)
        return out
    }
}
