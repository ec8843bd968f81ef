import AetherTransport

/// `UDPAddress(parsing:)` (`A.B.C.D:PORT` or `localhost:PORT`, from the command line and config).
/// Properties: no crash; errors are `.invalidArgument`; an accepted text is canonical: it equals the
/// address's description (or is `localhost:` and the port), and the description parses back to the address.
func fuzzInput(_ bytes: UnsafeRawBufferPointer) {
    let text = String(decoding: unsafe Array(bytes), as: UTF8.self)
    let address: UDPAddress
    do {
        address = try UDPAddress(parsing: text)
    } catch {
        FuzzCheck.require(error.code == .invalidArgument, "a reject must be invalidArgument, got \(error.code)")
        return
    }
    let canonical = text == address.description || (address.ipv4 == 0x7f00_0001 && text == "localhost:\(address.port)")
    FuzzCheck.accepted("address \(address)")
    FuzzCheck.require(canonical, "accepted a non-canonical address \(text.debugDescription) as \(address)")
    FuzzCheck.require((try? UDPAddress(parsing: address.description)) == address, "an address does not round-trip")
}
