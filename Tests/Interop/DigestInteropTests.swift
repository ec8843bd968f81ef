import AetherIO
import Foundation
import Testing

@Suite struct DigestInteropTests {
    @Test func sha256AndCRC32CMatchHashlibAndThePyPICRC32CPackage() throws {
        var generator = SecureRandom()
        let lengths = [0, 1, 3, 8, 63, 64, 65, 4095, 4097, 65_536, 1_048_577]
        let frames = lengths.map { length in (0..<length).map { _ in UInt8.random(in: 0...255, using: &generator) } }
        var input = Data()
        for frame in frames {
            unsafe withUnsafeBytes(of: UInt64(frame.count).littleEndian) { unsafe input.append(contentsOf: $0) }
            input.append(contentsOf: frame)
        }
        let output = try PythonPeer.run("digests.py", input: input)
        let lines = String(decoding: output, as: UTF8.self).split(separator: "\n")
        #expect(lines.count == frames.count)
        for (frame, line) in zip(frames, lines) {
            let crcHex = String(CRC32C.checksum(frame), radix: 16)
            let expected = "\(SHA256.hash(frame).hex) \(String(repeating: "0", count: 8 - crcHex.count) + crcHex)"
            #expect(String(line) == expected, "length \(frame.count)")
        }
    }
}
