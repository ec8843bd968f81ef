import AetherIO
import AetherSecurity

/// The key store file parser (`KeyStoreFormat.decode`, docs/KEY-STORE.md). Properties: it never
/// crashes; whatever it accepts re-encodes to the same bytes (one encoding per item); it accepts an
/// item under its own host id and refuses it under another.
func fuzzInput(_ bytes: UnsafeRawBufferPointer) {
    let item: KeyStoreItem
    do {
        item = try unsafe KeyStoreFormat.decode(bytes, expectedHostID: nil)
    } catch {
        FuzzCheck.require(error.code == .keyStoreDamaged, "a parse failure must be keyStoreDamaged, got \(error.code)")
        return
    }
    let encoded = KeyStoreFormat.encode(item)
    let same = unsafe encoded.withUnsafeBytes { unsafe $0.elementsEqual(bytes) }
    FuzzCheck.require(same, "an accepted item does not re-encode to its bytes")
    FuzzCheck.require(
        (try? unsafe KeyStoreFormat.decode(bytes, expectedHostID: item.hostID)) == item,
        "an item is not accepted under its own host id")
    var other = item.hostID.bytes
    other[0] ^= 0xFF
    let otherHost = try? HostID(bytes: other)
    FuzzCheck.require(
        (try? unsafe KeyStoreFormat.decode(bytes, expectedHostID: otherHost)) == nil,
        "an item is accepted under another host id")
}
