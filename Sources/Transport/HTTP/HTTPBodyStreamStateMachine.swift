/// The state of an `HTTPBodyStream`: a bounded queue of pieces between one or more writers (tasks) and the
/// client's thread (libcurl's read callback), with the wake-ups each side owes the other. Pure: the owner
/// performs the returned actions after letting go of its lock.
struct HTTPBodyStreamStateMachine {
    /// A writer parked until there is room, with the piece it brings.
    struct ParkedWriter {
        let piece: HTTPBodyPiece
        let resume: @Sendable (Bool) -> Void
    }

    enum WriteAction {
        /// Queued; wake the consumer if it waits (`wake` is nil otherwise).
        case queued(wake: (@Sendable () -> Void)?)
        /// Full: the writer was parked and is resumed later.
        case parked
        /// Refused: the stream is finished, closed, or the piece overruns the declared length.
        case refused(TransportError)
    }

    enum NextAction {
        case piece(HTTPBodyPiece, resume: (@Sendable (Bool) -> Void)?)
        /// Nothing yet: the consumer pauses and is woken by the next write or finish.
        case waiting
        case finished
        case failed(TransportError)
    }

    let length: Int64?
    let capacity: Int
    private var queue: [HTTPBodyPiece] = []
    private var head = 0
    private var parked: [ParkedWriter] = []
    private var accepted: Int64 = 0
    private var finished = false
    private var failure: TransportError?
    private var closed = false
    private var consumerWaiting = false
    private var wake: (@Sendable () -> Void)?

    init(length: Int64?, capacity: Int) {
        self.length = length
        self.capacity = max(1, capacity)
    }

    private var queuedCount: Int { queue.count - head }

    mutating func write(_ piece: HTTPBodyPiece, resume: @escaping @Sendable (Bool) -> Void) -> WriteAction {
        if closed { return .refused(TransportError(.cancelled, "the request this body belongs to has ended")) }
        if finished || failure != nil {
            return .refused(TransportError(.invalidArgument, "the body stream was already finished"))
        }
        let total = accepted + Int64(piece.count)
        if let length, total > length {
            let error = TransportError(.bodySourceFailed, "the body stream overran its declared length of \(length)")
            failure = error
            return .refused(error)
        }
        accepted = total
        guard queuedCount < capacity else {
            parked.append(ParkedWriter(piece: piece, resume: resume))
            return .parked
        }
        queue.append(piece)
        return .queued(wake: takeWake())
    }

    /// No more pieces. A stream with a declared length that is short fails the request.
    mutating func finish() -> (@Sendable () -> Void)? {
        guard !finished, failure == nil, !closed else { return nil }
        if let length, accepted != length {
            failure = TransportError(
                .bodySourceFailed, "the body stream ended after \(accepted) of its declared \(length) bytes")
        } else {
            finished = true
        }
        return takeWake()
    }

    /// The writer gives up: the request fails with `.bodySourceFailed`.
    mutating func abort(_ reason: String) -> (@Sendable () -> Void)? {
        guard !finished, failure == nil, !closed else { return nil }
        failure = TransportError(.bodySourceFailed, reason)
        return takeWake()
    }

    /// The consumer installs how it wants to be woken.
    mutating func attach(wake: @escaping @Sendable () -> Void) {
        self.wake = wake
    }

    /// The consumer takes the next piece.
    mutating func next() -> NextAction {
        if queuedCount > 0 {
            let piece = queue[head]
            head += 1
            if head > 64 && head * 2 > queue.count {
                queue.removeFirst(head)
                head = 0
            }
            var resume: (@Sendable (Bool) -> Void)?
            if !parked.isEmpty {
                let writer = parked.removeFirst()
                queue.append(writer.piece)
                resume = writer.resume
            }
            return .piece(piece, resume: resume)
        }
        if let failure { return .failed(failure) }
        if finished { return .finished }
        consumerWaiting = true
        return .waiting
    }

    /// The request ended: parked writers are refused and later writes fail.
    mutating func close() -> [@Sendable (Bool) -> Void] {
        closed = true
        wake = nil
        queue.removeAll()
        head = 0
        let writers = parked.map(\.resume)
        parked.removeAll()
        return writers
    }

    private mutating func takeWake() -> (@Sendable () -> Void)? {
        guard consumerWaiting else { return nil }
        consumerWaiting = false
        return wake
    }
}
