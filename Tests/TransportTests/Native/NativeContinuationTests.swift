import AetherIO
import Foundation
import Testing

@testable import AetherTransport

/// `NativeBackend`'s side of a cut chunk's continuation (`docs/PROTOCOL.md` 3.2.2) against a scripted receiver: the
/// holdings it asks for, the continuation request's bytes, and the answers that say the receiver holds another prefix.
@Suite struct NativeContinuationTests {
    typealias Object = NativeBackendTests.Object
    static let resuming = AetherCapabilities(minimumChunkSize: 16 << 10, maximumRun: 64, resumesChunks: true)

    static func partialRefusal(_ header: String?, problem: String = "partial-mismatch") -> ScriptedNativeReceiver.Answer
    {
        var answer = ScriptedNativeReceiver.problem(problem, 409, chunk: 1)
        if let header { answer.headers.add(AetherWire.partialField, header) }
        return answer
    }

    @Test func holdingsAskForThePartialsOnlyOfAReceiverThatKeepsThem() async throws {
        let object = try Object()
        var status = object.status(received: [0])
        status.partials = [.init(index: 0, received: 9), .init(index: 1, received: 700)]
        let receiver = ScriptedNativeReceiver(answers: [
            .init(status: 200, body: status.jsonBytes),
            .init(status: 200, body: object.status(received: [0]).jsonBytes),
        ])
        let holdings = try await receiver.backend(server: Self.resuming).holdings(of: object.upload)
        // A partial of a chunk the bitmap lists as stored is no prefix to continue.
        #expect(holdings == RunHoldings(progress: .chunks([0], complete: false), prefixes: [1: 700]))
        let plain = try receiver.backend(server: AetherCapabilities(minimumChunkSize: 16 << 10, maximumRun: 64))
        #expect(!plain.continuesCutParts(of: object.upload))
        #expect(try await plain.holdings(of: object.upload) == RunHoldings(progress: .chunks([0], complete: false)))
        let asked = receiver.requests.map { $0.headers.values(AetherWire.partialsRequestField) }
        #expect(asked == [["?1"], []])
    }

    @Test func aContinuationCarriesTheFirstChunkFromItsOffsetAndTheOthersWhole() async throws {
        let object = try Object()
        let receipt = AetherRunReceiptHeader(index: 1, sha256: Array(object.hashes[1...2])).fieldValue
        let receiver = ScriptedNativeReceiver(answers: [
            .init(status: 201, headers: [AetherWire.runReceiptField: receipt])
        ])
        let backend = try receiver.backend(server: Self.resuming)
        #expect(backend.continuesCutParts(of: object.upload))
        let outcome = try await backend.send(
            run: [object.part(1, key: "k"), object.part(2)], from: 5000, to: object.upload)
        #expect(outcome.receipts.map(\.index) == [1, 2])
        #expect(outcome.heldPrefix == nil)
        let request = try #require(receiver.requests.first)
        #expect(request.method == "PUT")
        #expect(request.url == NativeBackendTests.location + "/chunks/1")
        let header = try AetherRunHeader(parsing: request.headers[AetherWire.chunkField] ?? "")
        #expect(header.from == 5000)
        #expect(header.length == 16_384 + 7_232)
        #expect(header.sha256 == Array(object.hashes[1...2]))
        #expect(header.link == object.links[2])
        #expect(request.headers["Idempotency-Key"] == "k")
        #expect(request.body.length == Int64(16_384 + 7_232 - 5000))
        #expect(request.body.heldBytes == Array(object.bytes[(16_384 + 5000)...]))
    }

    @Test func aRefusalNamingAnotherPrefixIsReturnedAndAMalformedOneIsAViolation() async throws {
        let object = try Object()
        let receiver = ScriptedNativeReceiver(answers: [
            Self.partialRefusal("index=1, received=7000"), Self.partialRefusal("index=1, received=0"),
            Self.partialRefusal(nil), Self.partialRefusal("index=2, received=7000"),
            Self.partialRefusal("index=1, received=16384"), Self.partialRefusal("index=1, received=5000"),
            Self.partialRefusal(nil, problem: "duplicate-chunk"),
        ])
        let backend = try receiver.backend(server: Self.resuming)
        func send() async throws -> RunOutcome {
            try await backend.send(run: [object.part(1)], from: 5000, to: object.upload)
        }
        let moved = try await send()
        #expect(moved.heldPrefix == 7000)
        #expect(moved.receipts.isEmpty)
        #expect(moved.stoppedBy?.code == .conflict)
        #expect(try await send().heldPrefix == 0)
        for _ in 0..<4 {
            let error = await NativeBackendTests.code { _ = try await send() }
            #expect(error?.code == .protocolViolation)
        }
        // Another 409 is the conflict it always was.
        let other = await NativeBackendTests.code { _ = try await send() }
        #expect(other?.code == .conflict)
    }

    @Test func noContinuationIsSentToAReceiverThatKeepsNoPrefixOrFromOutsideTheChunk() async throws {
        let object = try Object()
        let receiver = ScriptedNativeReceiver(answers: [])
        let plain = try receiver.backend(server: AetherCapabilities(minimumChunkSize: 16 << 10, maximumRun: 64))
        let refused = await NativeBackendTests.code {
            _ = try await plain.send(run: [object.part(1)], from: 10, to: object.upload)
        }
        #expect(refused?.code == .invalidArgument)
        let resuming = try receiver.backend(server: Self.resuming)
        for from: Int64 in [16_384, 20_000] {
            let error = await NativeBackendTests.code {
                _ = try await resuming.send(run: [object.part(1)], from: from, to: object.upload)
            }
            #expect(error?.code == .invalidArgument)
        }
        #expect(receiver.requests.isEmpty)
    }
}
