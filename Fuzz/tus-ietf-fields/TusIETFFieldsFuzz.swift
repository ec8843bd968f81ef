import AetherIO
import AetherTransport

@testable import AetherReceiver

/// The tus and IETF header fields the receiver reads; the first byte selects the parser, the second (where it
/// matters) a variant: tus `Upload-Metadata` (`TusMetadata.decode`), `Upload-Checksum` and `Upload-Concat`
/// (`TusHandler`), IETF `Upload-Limit` (`IETFUploadLimits`, both interop versions), `Repr-Digest` /
/// `Content-Digest` (`RequestFields.sha256Digest`), the Structured Fields Integer and Boolean items of
/// `Upload-Offset`, `Upload-Length`, `Upload-Complete` and `Upload-Draft-Interop-Version`, and tus integers.
/// Properties: no crash; every accept re-encodes to a value that parses back to the same thing; refusals of the
/// receiver's parsers are `malformedRequest`.
func fuzzInput(_ bytes: UnsafeRawBufferPointer) {
    var cursor = FuzzCursor(unsafe Array(bytes))
    let selector = cursor.u8() % 7
    let variant = cursor.u8()
    let text = String(decoding: cursor.rest, as: UTF8.self)
    switch selector {
    case 0: metadata(text)
    case 1: checksum(text)
    case 2: concat(text)
    case 3: uploadLimit(text, version: variant % 2 == 0 ? .latest : .draft05)
    case 4: digest(text, field: variant % 2 == 0 ? "Repr-Digest" : "Content-Digest")
    case 5: integers(text, variant: variant)
    default: tusInteger(text, repeated: variant % 2 == 1)
    }
}

/// One request carrying `name: value` (and the value again when `repeated`), as libmicrohttpd would hand it over.
private func request(_ name: String, _ value: String, repeated: Bool = false) -> HTTPServerRequest {
    HTTPServerRequest(
        method: "POST", path: "/uploads", headers: repeated ? [(name, value), (name, value)] : [(name, value)])
}

private func requireMalformed(_ error: ReceiverError, _ what: String) {
    FuzzCheck.require(error.code == .malformedRequest, "\(what): a refusal is not malformed-request: \(error)")
}

private func metadata(_ text: String) {
    guard let pairs = try? TusMetadata.decode(text) else { return }
    FuzzCheck.accepted("Upload-Metadata with \(pairs.count) pairs")
    for key in pairs.keys {
        FuzzCheck.require(!key.isEmpty && key.utf8.allSatisfy { $0 > 0x20 && $0 < 0x7F && $0 != 0x2C }, "bad key")
    }
    // The receiver stores the pairs and gives them back in HEAD with `encode`: keys the encoder refuses
    // (over 256 bytes) would be dropped there, so they must not get in.
    let encoded: String
    do {
        encoded = try TusMetadata.encode(pairs)
    } catch {
        FuzzCheck.fail("Upload-Metadata: accepted pairs do not encode: \(error)")
    }
    guard let again = try? TusMetadata.decode(encoded) else {
        FuzzCheck.fail("Upload-Metadata: the encoding of accepted pairs is refused")
    }
    FuzzCheck.require(again == pairs, "Upload-Metadata: decode -> encode -> decode changed the pairs")
}

private func checksum(_ text: String) {
    let digest: AppendRequest.Digest?
    do throws(ReceiverError) {
        digest = try TusHandler.checksum(request("Upload-Checksum", text))
    } catch {
        return requireMalformed(error, "Upload-Checksum")
    }
    guard let digest else { FuzzCheck.fail("Upload-Checksum: a present field gave no digest") }
    FuzzCheck.accepted("Upload-Checksum \(digest.algorithm)")
    let size =
        switch digest.algorithm {
        case .sha1: 20
        case .sha256: 32
        case .crc32: 4
        }
    FuzzCheck.require(digest.bytes.count == size, "Upload-Checksum: digest length does not fit the algorithm")
    let name =
        switch digest.algorithm {
        case .sha1: "sha1"
        case .sha256: "sha256"
        case .crc32: "crc32"
        }
    let field = name + " " + String(StructuredField.serialize(digest.bytes).dropFirst().dropLast())
    guard let again = try? TusHandler.checksum(request("Upload-Checksum", field)) else {
        FuzzCheck.fail("Upload-Checksum: the canonical form of an accepted checksum is refused")
    }
    FuzzCheck.require(
        again.algorithm == digest.algorithm && again.bytes == digest.bytes, "Upload-Checksum: no round trip")
}

private func concat(_ text: String) {
    let concatenation: NewUpload.Concatenation
    do throws(ReceiverError) {
        concatenation = try TusHandler.parseConcat(text)
    } catch {
        return requireMalformed(error, "Upload-Concat")
    }
    FuzzCheck.accepted("Upload-Concat")
    guard case .final(let partials) = concatenation else { return }
    FuzzCheck.require((1...1000).contains(partials.count), "Upload-Concat: partial count out of range")
    for id in partials {
        // No id that could name a path outside the store: base32 characters only.
        FuzzCheck.require(
            id.rawValue.utf8.allSatisfy { (0x61...0x7A).contains($0) || (0x32...0x37).contains($0) },
            "Upload-Concat: an accepted id holds other characters than lowercase base32")
    }
    let field = "final;" + partials.map { "/uploads/\($0)" }.joined(separator: " ")
    guard case .final(let again)? = try? TusHandler.parseConcat(field) else {
        FuzzCheck.fail("Upload-Concat: the canonical form of an accepted field is refused")
    }
    FuzzCheck.require(again == partials, "Upload-Concat: no round trip")
}

private func uploadLimit(_ text: String, version: IETFInteropVersion) {
    guard let limits = IETFUploadLimits(field: text, version: version) else { return }
    FuzzCheck.accepted("Upload-Limit")
    for value in [
        limits.maximumSize, limits.minimumSize, limits.maximumAppendSize, limits.minimumAppendSize, limits.lifetime,
    ] {
        FuzzCheck.require((value ?? 0) >= 0, "Upload-Limit: a negative limit accepted")
    }
    guard let again = IETFUploadLimits(field: limits.field(version: version), version: version) else {
        FuzzCheck.fail("Upload-Limit: the field of accepted limits is refused")
    }
    // No limits at all are written as `min-size=0`, which says the same.
    let expected = limits == IETFUploadLimits() ? IETFUploadLimits(minimumSize: 0) : limits
    FuzzCheck.require(again == expected, "Upload-Limit: no round trip")
}

private func digest(_ text: String, field: String) {
    let digest: Digest32?
    do throws(ReceiverError) {
        digest = try RequestFields.sha256Digest(request(field, text), field)
    } catch {
        return requireMalformed(error, field)
    }
    guard let digest else { return }
    FuzzCheck.accepted(field)
    FuzzCheck.require(StructuredField.dictionary(text) != nil, "\(field): a digest from a field that is no dictionary")
    let canonical = "sha-256=" + StructuredField.serialize(digest.bytes)
    guard let again = try? RequestFields.sha256Digest(request(field, canonical), field) else {
        FuzzCheck.fail("\(field): the canonical form of an accepted digest is refused")
    }
    FuzzCheck.require(again == digest, "\(field): no round trip")
}

private func integers(_ text: String, variant: UInt8) {
    let names = ["Upload-Offset", "Upload-Length", "Upload-Complete", "Upload-Draft-Interop-Version"]
    let name = names[Int(variant) % names.count]
    let item = StructuredField.item(text)
    do throws(ReceiverError) {
        switch name {
        case "Upload-Complete":
            guard let value = try RequestFields.boolean(request(name, text), name) else {
                FuzzCheck.fail("\(name): a present field gave no value")
            }
            FuzzCheck.require(item == .boolean(value), "\(name): disagrees with the item parser")
            FuzzCheck.require(
                (try? RequestFields.boolean(request(name, StructuredField.serialize(value)), name)) == value,
                "\(name): no round trip")
        case "Upload-Draft-Interop-Version":
            let version = try IETFHandler.version(request(name, text))
            FuzzCheck.require(item == .integer(version.rawValue), "\(name): disagrees with the item parser")
        default:
            guard let value = try RequestFields.integer(request(name, text), name) else {
                FuzzCheck.fail("\(name): a present field gave no value")
            }
            FuzzCheck.require(value >= 0 && item == .integer(value), "\(name): disagrees with the item parser")
            guard let canonical = StructuredField.serialize(value) else {
                FuzzCheck.fail("\(name): an accepted integer does not serialize")
            }
            FuzzCheck.require(
                (try? RequestFields.integer(request(name, canonical), name)) == value, "\(name): no round trip")
        }
        FuzzCheck.accepted(name)
    } catch {
        requireMalformed(error, name)
    }
}

private func tusInteger(_ text: String, repeated: Bool) {
    let value: Int64?
    do throws(ReceiverError) {
        value = try RequestFields.tusInteger(request("Upload-Offset", text, repeated: repeated), "Upload-Offset")
    } catch {
        return requireMalformed(error, "tus Upload-Offset")
    }
    guard let value else { FuzzCheck.fail("tus Upload-Offset: a present field gave no value") }
    FuzzCheck.accepted("tus integer")
    FuzzCheck.require(!repeated, "tus Upload-Offset: a repeated field accepted")
    FuzzCheck.require(value >= 0 && Int64(text) == value, "tus Upload-Offset: the value is not the digits sent")
}
