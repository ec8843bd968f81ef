public import AetherIO

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The JSON index `aether ec encode --fountain` writes beside its packet files: the code, the 12-byte
/// RFC 6330 OTI as lowercase hex, the repair count, the file's SHA-256 and the SHA-256 of every packet file,
/// so `aether ec decode` can drop damaged packets and verify the rebuilt file.
///
///     {"format":"aether-fountain/1","code":"raptorq","oti":"<24 hex>","repairSymbolsPerBlock":R,
///      "fileSize":F,"fileSHA256":"<64 hex>","packetSHA256":["<64 hex>", ...]}
///
/// Packets are listed block by block, ESI 0 ..< K + R in each; packet (SBN, ESI) is the file
/// `packet-SSS-EEEEEEEE.bin` holding the FEC payload ID (4 bytes) and the symbol.
public struct FountainIndex: Sendable, Equatable {
    /// The format tag, checked on read.
    public static let format = "aether-fountain/1"
    /// The code tag.
    public static let code = "raptorq"

    /// The object transmission information.
    public let transmissionInformation: RaptorQTransmissionInformation
    /// Repair packets written per source block.
    public let repairSymbolsPerBlock: Int
    /// SHA-256 of the original file.
    public let fileDigest: Digest32
    /// SHA-256 of each packet file, block by block, ESI order.
    public let packetDigests: [Digest32]

    /// The original file's size.
    public var fileSize: Int { Int(transmissionInformation.transferLength) }

    /// (SBN, ESI) of every packet, in index order.
    public var packetIDs: [(sourceBlockNumber: Int, encodingSymbolID: UInt32)] {
        var out: [(Int, UInt32)] = []
        for sbn in 0..<transmissionInformation.sourceBlocks {
            let count = transmissionInformation.sourceSymbols(inBlock: sbn) + repairSymbolsPerBlock
            for esi in 0..<count { out.append((sbn, UInt32(esi))) }
        }
        return out
    }

    /// The file name of packet (SBN, ESI).
    public static func packetFileName(sourceBlockNumber: Int, encodingSymbolID: UInt32) -> String {
        func padded(_ value: Int, _ width: Int) -> String {
            let digits = String(value)
            return String(repeating: "0", count: max(0, width - digits.count)) + digits
        }
        return "packet-" + padded(sourceBlockNumber, 3) + "-" + padded(Int(encodingSymbolID), 8) + ".bin"
    }

    /// An index; checks the digest count against the OTI and repair count.
    public init(
        transmissionInformation: RaptorQTransmissionInformation, repairSymbolsPerBlock: Int, fileDigest: Digest32,
        packetDigests: [Digest32]
    ) throws(CodingError) {
        guard repairSymbolsPerBlock >= 0,
            repairSymbolsPerBlock <= Int(RaptorQPacket.maximumEncodingSymbolID) + 1
                - RaptorQBlockParameters.maximumSourceSymbols
        else {
            throw CodingError(.malformedIndex, "repair count \(repairSymbolsPerBlock) is out of range")
        }
        self.transmissionInformation = transmissionInformation
        self.repairSymbolsPerBlock = repairSymbolsPerBlock
        self.fileDigest = fileDigest
        self.packetDigests = packetDigests
        guard packetDigests.count == packetIDs.count else {
            throw CodingError(.malformedIndex, "\(packetDigests.count) packet digests for \(packetIDs.count) packets")
        }
    }

    private struct Wire: Codable {
        var format: String
        var code: String
        var oti: String
        var repairSymbolsPerBlock: Int
        var fileSize: Int
        var fileSHA256: String
        var packetSHA256: [String]
    }

    private struct FormatOnly: Codable {
        var format: String
    }

    /// Whether index JSON names the fountain format (else it is some other index, such as Reed-Solomon's).
    public static func isFountainIndex(json: [UInt8]) -> Bool {
        guard let probe = try? JSONDecoder().decode(FormatOnly.self, from: Data(json)) else { return false }
        return probe.format == format
    }

    /// The JSON bytes.
    public func encoded() throws(CodingError) -> [UInt8] {
        let wire = Wire(
            format: Self.format, code: Self.code, oti: Hex.encode(transmissionInformation.serialized),
            repairSymbolsPerBlock: repairSymbolsPerBlock, fileSize: fileSize, fileSHA256: fileDigest.hex,
            packetSHA256: packetDigests.map(\.hex))
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        do {
            return Array(try encoder.encode(wire)) + [0x0A]
        } catch {
            throw CodingError(.malformedIndex, "cannot encode the index: \(error)")
        }
    }

    /// Parses and validates index JSON; anything unexpected is `.malformedIndex`.
    public init(json: [UInt8]) throws(CodingError) {
        let wire: Wire
        do {
            wire = try JSONDecoder().decode(Wire.self, from: Data(json))
        } catch {
            throw CodingError(.malformedIndex, "index is not valid JSON of the expected shape")
        }
        guard wire.format == Self.format, wire.code == Self.code else {
            throw CodingError(.malformedIndex, "unknown fountain index format or code")
        }
        let oti: RaptorQTransmissionInformation
        do {
            oti = try RaptorQTransmissionInformation(serialized: try Hex.decodeLowercase(wire.oti))
        } catch {
            throw CodingError(.malformedIndex, "the index's OTI is not 12 valid bytes of lowercase hex")
        }
        guard wire.fileSize == Int(oti.transferLength) else {
            throw CodingError(.malformedIndex, "file size \(wire.fileSize) disagrees with the OTI")
        }
        func digest(_ text: String) throws(CodingError) -> Digest32 {
            do {
                return try Digest32(hex: text)
            } catch {
                throw CodingError(.malformedIndex, "a digest in the index is not 64 hex digits")
            }
        }
        var digests: [Digest32] = []
        digests.reserveCapacity(wire.packetSHA256.count)
        for text in wire.packetSHA256 { digests.append(try digest(text)) }
        try self.init(
            transmissionInformation: oti, repairSymbolsPerBlock: wire.repairSymbolsPerBlock,
            fileDigest: try digest(wire.fileSHA256), packetDigests: digests)
    }
}
