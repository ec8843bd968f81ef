import AetherIO
import AetherTransport

extension ChunkIdempotencyManager {
    /// One attempt at part `index` under the next attempt's key: `send` gets the key (its hex goes into the
    /// request's `Idempotency-Key`) and the attempt's number; the key is completed when `send` returns and released
    /// when it throws, so a number is never used for other bytes. A key that cannot be reserved (a journal that
    /// cannot be written) is `.invalidArgument`. Every uploader sends a part through this, plain and followed.
    func attempt<R: Sendable>(
        index: Int, chunkHash: Digest32, _ send: (_ key: String, _ attempt: Int) async throws(TransportError) -> R
    ) async throws(TransportError) -> R {
        let key: IdempotencyKey
        let number: Int
        do {
            (key, number) = try reserveNextAttempt(index: index, chunkHash: chunkHash)
        } catch {
            throw TransportError(.invalidArgument, "no idempotency key for part \(index): \(error.message)")
        }
        do {
            let result = try await send(key.hex, number)
            _ = complete(key)
            return result
        } catch {
            _ = release(key)
            throw error
        }
    }
}
