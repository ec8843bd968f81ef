internal import CAetherSodium

/// Every call into libsodium made by AetherIO. Nothing else in this module imports it.
enum Sodium {
    /// sodium_init, once per process; it is safe to call from several threads.
    private static let initialized: Bool = sodium_init() >= 0

    /// Whether libsodium initialised; the CSPRNG fails closed when it did not.
    static var isReady: Bool { initialized }

    /// sodium_memzero over the whole value.
    static func wipe<T>(_ value: inout T) {
        unsafe withUnsafeMutableBytes(of: &value) { raw in
            unsafe sodium_memzero(raw.baseAddress, raw.count)
        }
    }

    /// sodium_memzero over a buffer.
    static func wipe(_ buffer: UnsafeMutableRawBufferPointer) {
        guard let base = buffer.baseAddress else { return }
        unsafe sodium_memzero(base, buffer.count)
    }

    /// randombytes_buf (getrandom(2) underneath).
    static func randomBytes(_ buffer: UnsafeMutableRawBufferPointer) {
        guard let base = buffer.baseAddress, unsafe !buffer.isEmpty else { return }
        _ = initialized
        unsafe randombytes_buf(base, buffer.count)
    }

    /// randombytes_uniform: uniform in 0..<upperBound without modulo bias.
    static func randomUniform(_ upperBound: UInt32) -> UInt32 {
        _ = initialized
        return randombytes_uniform(upperBound)
    }

    /// sodium_memcmp: constant-time equality of equal-length buffers.
    static func constantTimeEqual(_ a: UnsafeRawBufferPointer, _ b: UnsafeRawBufferPointer) -> Bool {
        guard a.count == b.count else { return false }
        guard let pa = a.baseAddress, let pb = b.baseAddress else { return a.count == 0 }
        return unsafe sodium_memcmp(pa, pb, a.count) == 0
    }
}
