/// The constants of the v3 session wire format (docs/SECURE-SESSION.md). Every limit lives here.
public enum SessionWire {
    /// Wire version byte (byte 1 of every datagram).
    public static let version: UInt8 = 0x03
    /// Byte 0 of message 1.
    public static let message1Type: UInt8 = 0x01
    /// Byte 0 of message 2.
    public static let message2Type: UInt8 = 0x02
    /// Byte 0 of a sealed record.
    public static let recordType: UInt8 = 0x03

    /// The fixed part of the prologue; the first 26 bytes of message 1 follow it.
    public static let prologueLabel: [UInt8] = Array("aether-secure-session/3".utf8)

    /// Size of the hello (message 1 payload).
    public static let helloSize = 36
    /// Size of the clear part of message 1 (type, version, attempt id, key id).
    public static let message1HeaderSize = 26
    /// Size of message 1.
    public static let message1Size = 110
    /// Size of the clear part of message 2 (type, version, attempt id).
    public static let message2HeaderSize = 10
    /// Smallest message 2 (empty payload).
    public static let message2MinSize = 58
    /// Largest message 2 payload (the largest Accept).
    public static let message2MaxPayload = 369
    /// Largest message 2.
    public static let message2MaxSize = 427

    /// Size of a record header.
    public static let recordHeaderSize = 20
    /// Size of the AEAD tag.
    public static let tagSize = 16
    /// Largest record plaintext (the datagram then is the IPv4 UDP maximum, 65,507 bytes).
    public static let maxRecordPlaintext = 65_471
    /// Largest record datagram.
    public static let maxRecordSize = 65_507
    /// No record is sealed or opened at this counter or above (2^32).
    public static let counterLimit: UInt64 = 1 << 32

    /// Most slots in a slot status.
    public static let maxSlots = 16
    /// Longest host name in an Accept, in UTF-8 bytes.
    public static let maxHostNameBytes = 64
    /// Accept's liveness timeout range (ms).
    public static let livenessTimeoutRange: ClosedRange<UInt32> = 1_000...600_000
    /// Accept's max session age range (s).
    public static let maxSessionAgeRange: ClosedRange<UInt32> = 60...604_800
    /// Accept's max counter range.
    public static let maxCounterRange: ClosedRange<UInt32> = 4_095...UInt32.max
    /// Accept's max record plaintext range.
    public static let maxRecordPlaintextRange: ClosedRange<UInt16> = 1_200...65_471
    /// SessionBusy's retry-after range (ms).
    public static let retryAfterRange: ClosedRange<UInt32> = 0...60_000
    /// The host accepts hello timestamps down to its time minus this (ms).
    public static let helloMaxAgeMilliseconds: UInt64 = 120_000
    /// The host accepts hello timestamps up to its time plus this (ms).
    public static let helloMaxSkewMilliseconds: UInt64 = 30_000

    // Timing rules of docs/SECURE-SESSION.md section 2.3 (the reconnect state machine uses them).

    /// Message 1 is resent unchanged at this interval...
    public static let message1ResendInterval: Duration = .milliseconds(250)
    /// ...for this long.
    public static let message1ResendWindow: Duration = .seconds(2)
    /// A host answers a byte-identical message 1 with its cached message 2 for this long.
    public static let message2CacheLifetime: Duration = .seconds(2)
    /// A freshly sealed confirm is sent at this interval after an Accept...
    public static let confirmInterval: Duration = .milliseconds(100)
    /// ...for this long.
    public static let confirmWindow: Duration = .seconds(2)
    /// An attempt whose confirms ran out stays receive-only this long.
    public static let receiveOnlyLifetime: Duration = .seconds(11)
    /// At most this many receive-only attempts are kept.
    public static let maxReceiveOnlyAttempts = 6
    /// A superseded session still opens records for this long.
    public static let drainWindow: Duration = .seconds(1)
}
