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

    /// randombytes_buf (getrandom(2) underneath). Stops the process when libsodium did not initialise
    /// (`libraryReady` is false only in tests that force that failure): weak bytes are never returned.
    static func randomBytes(_ buffer: UnsafeMutableRawBufferPointer, libraryReady: Bool = initialized) {
        requireRandomness(libraryReady)
        guard let base = buffer.baseAddress, unsafe !buffer.isEmpty else { return }
        unsafe randombytes_buf(base, buffer.count)
    }

    /// randombytes_uniform: uniform in 0..<upperBound without modulo bias. Stops the process as `randomBytes`.
    static func randomUniform(_ upperBound: UInt32, libraryReady: Bool = initialized) -> UInt32 {
        requireRandomness(libraryReady)
        return randombytes_uniform(upperBound)
    }

    /// The CSPRNG's fail-closed rule: without an initialised libsodium there is no randomness Aether trusts, and
    /// no caller could go on safely (keys, nonces and identifiers all need it), so this is a system error that
    /// stops the process. libsodium itself aborts when getrandom(2) and /dev/urandom both fail.
    private static func requireRandomness(_ libraryReady: Bool) {
        precondition(libraryReady, "the system CSPRNG is unavailable (sodium_init failed); refusing weak randomness")
    }

    /// sodium_memcmp: constant-time equality of equal-length buffers.
    static func constantTimeEqual(_ a: UnsafeRawBufferPointer, _ b: UnsafeRawBufferPointer) -> Bool {
        guard a.count == b.count else { return false }
        guard let pa = a.baseAddress, let pb = b.baseAddress else { return a.count == 0 }
        return unsafe sodium_memcmp(pa, pb, a.count) == 0
    }
}
