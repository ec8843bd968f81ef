/// The event stream of a job that reports through a callback (`ChunkedUploader`, `UploadJob`, `CaptureJob`): the
/// job runs in a task, each event is yielded, the stream ends after the job returns or with its error, and ending
/// the iteration (or cancelling the consuming task) cancels the job. Bounded (ERR-5): a consumer that falls more than
/// `bufferLimit` events behind loses the oldest, never the last.
enum EventStream {
    static func make<Event: Sendable>(
        bufferLimit: Int, _ job: @escaping @Sendable (@escaping @Sendable (Event) -> Void) async throws -> Void
    ) -> AsyncThrowingStream<Event, any Error> {
        let (stream, continuation) = AsyncThrowingStream<Event, any Error>.makeStream(
            bufferingPolicy: .bufferingNewest(max(bufferLimit, 1)))
        let task = Task {
            do {
                try await job { continuation.yield($0) }
                continuation.finish()
            } catch {
                continuation.finish(throwing: error)
            }
        }
        continuation.onTermination = { _ in task.cancel() }
        return stream
    }
}
