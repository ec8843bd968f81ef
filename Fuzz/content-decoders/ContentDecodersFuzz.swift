import AetherTransport

/// `ContentDecoder` (zstd and deflate `Content-Encoding` of native chunks, docs/PROTOCOL.md section 7.2) on
/// arbitrary input. Input: a byte choosing the coding and the mode, two bytes of decoded-size limit, a byte of
/// piece size, then the body. Mode 0 decodes the body as received, in pieces; mode 1 first encodes the body with
/// `ContentEncoder` and decodes that. Properties: no crash; the decoder never returns more bytes than the
/// limit, in total or per call, and its count is what it returned; a failure sticks (later calls throw the same
/// code); decoding in pieces agrees with decoding at once (a body both corrupt and too large
/// may be refused for either); an encoding of N bytes decodes back exactly under a
/// limit of N or more and is refused as `decodedTooLarge` under a smaller one.
func fuzzInput(_ bytes: UnsafeRawBufferPointer) {
    var cursor = FuzzCursor(unsafe Array(bytes))
    let control = cursor.u8()
    let coding: ContentCoding = control & 1 == 0 ? .zstd : .deflate
    let limit = Int64(cursor.u16())
    let piece = Int(cursor.u8()) + 1
    let body = cursor.rest
    if control & 2 == 0 {
        let streamed = decodeInPieces(body, coding, limit: limit, piece: piece)
        let whole = Result { () throws(AetherProtocolError) in try ContentDecoder.decode(body, coding, limit: limit) }
        switch (streamed, whole) {
        case (.success(let a), .success(let b)):
            FuzzCheck.accepted("\(coding) body of \(a.count) bytes")
            FuzzCheck.require(a == b, "decoding in pieces and at once give other bytes")
        case (.failure(let a), .failure(let b)):
            // A body both corrupt and too large may be refused for either, depending on where the pieces end
            // (zlib reports some damage only after writing output): both are refusals within the limit.
            let either: Set<AetherProtocolError.Code> = [.decodedTooLarge, .corruptEncoding]
            FuzzCheck.require(
                a.code == b.code || (either.contains(a.code) && either.contains(b.code)),
                "decoding in pieces and at once fail differently: \(a) / \(b)")
        default:
            FuzzCheck.fail("decoding in pieces and at once disagree on \(coding): \(streamed) / \(whole)")
        }
    } else {
        guard let encoded = try? ContentEncoder.encode(body, coding) else {
            FuzzCheck.fail("\(coding) cannot encode \(body.count) bytes")
        }
        switch decodeInPieces(encoded, coding, limit: limit, piece: piece) {
        case .success(let decoded):
            FuzzCheck.require(Int64(body.count) <= limit, "an encoding decoded past its limit")
            FuzzCheck.require(decoded == body, "\(coding) does not round-trip")
        case .failure(let error):
            FuzzCheck.require(
                Int64(body.count) > limit && error.code == .decodedTooLarge,
                "a valid \(coding) encoding within the limit is refused: \(error)")
        }
    }
}

/// Decodes `body` handed over `piece` bytes at a time, checking the limit after every call.
private func decodeInPieces(_ body: [UInt8], _ coding: ContentCoding, limit: Int64, piece: Int)
    -> Result<[UInt8], AetherProtocolError>
{
    let decoder: ContentDecoder
    do {
        decoder = try ContentDecoder(coding, limit: limit)
    } catch {
        FuzzCheck.fail("the \(coding) decoder does not start: \(error)")
    }
    var out: [UInt8] = []
    var start = 0
    repeat {
        let end = min(body.count, start + piece)
        do {
            let got = try decoder.update(body[start..<end])
            out += got
            FuzzCheck.require(Int64(got.count) <= limit, "one update returned more than the limit")
            FuzzCheck.require(Int64(out.count) <= limit, "the decoder returned more than the limit")
            FuzzCheck.require(decoder.decodedCount == Int64(out.count), "decodedCount is not what was returned")
        } catch {
            requireSticky(decoder, error)
            return .failure(error)
        }
        start = end
    } while start < body.count
    do {
        try decoder.finish()
    } catch {
        requireSticky(decoder, error)
        return .failure(error)
    }
    return .success(out)
}

/// After a failure every later call throws the same code and returns nothing.
private func requireSticky(_ decoder: ContentDecoder, _ failure: AetherProtocolError) {
    do {
        let more = try decoder.update([0x28, 0xB5, 0x2F, 0xFD])
        FuzzCheck.fail("a failed decoder took more input (\(more.count) bytes)")
    } catch {
        FuzzCheck.require(error.code == failure.code, "a failed decoder's error changed on update")
    }
    FuzzCheck.require(errorCode(decoder) == failure.code, "a failed decoder's error changed on finish")
}

private func errorCode(_ decoder: ContentDecoder) -> AetherProtocolError.Code? {
    do {
        try decoder.finish()
        return nil
    } catch {
        return error.code
    }
}
