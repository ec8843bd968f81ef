/// The limits a host puts on a session in its Accept.
package struct SessionLimits: Sendable, Hashable {
    /// With no authenticated record for this long (ms), either side closes the session (1,000 ... 600,000).
    package var livenessTimeout: UInt32
    /// The client reconnects before the session is this old (s, 60 ... 604,800).
    package var maxSessionAge: UInt32
    /// The client reconnects before either direction's next counter would pass this (4,095 ... 2^32 − 1).
    package var maxCounter: UInt32
    /// The largest record plaintext the host accepts (1,200 ... 65,471).
    package var maxRecordPlaintext: UInt16

    /// Wraps the four limits.
    package init(livenessTimeout: UInt32, maxSessionAge: UInt32, maxCounter: UInt32, maxRecordPlaintext: UInt16) {
        self.livenessTimeout = livenessTimeout
        self.maxSessionAge = maxSessionAge
        self.maxCounter = maxCounter
        self.maxRecordPlaintext = maxRecordPlaintext
    }

    /// Defaults Aether's host offers: 15 s liveness, 1 day, 2^32 − 1 counters, 65,471-byte records.
    package static let standard = SessionLimits(
        livenessTimeout: 15_000, maxSessionAge: 86_400, maxCounter: UInt32.max, maxRecordPlaintext: 65_471)
}
