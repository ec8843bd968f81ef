/// How a growing file is followed (`aether upload --follow`, `--follow-idle`).
public struct FollowOptions: Sendable {
    /// The writer is done when no process holds the file open for writing AND the file has not grown for this
    /// many seconds (`--follow-idle`, default 5); or at once when `end` is finished.
    public var idleSeconds: Double
    /// How often the file is looked at while it does not grow, in seconds (inotify wakes the follower sooner
    /// only at this granularity too; nothing spins).
    public var pollInterval: Double
    /// The caller's end signal, if any.
    public var end: FollowEnd?

    /// Options; by default 5 s of quiet after the writer closed the file end the follow, looking every 50 ms.
    public init(idleSeconds: Double = 5, pollInterval: Double = 0.05, end: FollowEnd? = nil) {
        self.idleSeconds = idleSeconds
        self.pollInterval = pollInterval
        self.end = end
    }

    /// `.invalidArgument` for a negative or non-finite idle time or a poll interval outside 1 ms ... 10 s.
    func validate() throws(UploaderError) {
        guard idleSeconds.isFinite, idleSeconds >= 0, idleSeconds <= 86_400 else {
            throw UploaderError(.invalidArgument, "the follow idle time \(idleSeconds) is outside 0...86400 seconds")
        }
        guard pollInterval.isFinite, pollInterval >= 0.001, pollInterval <= 10 else {
            throw UploaderError(.invalidArgument, "the follow poll interval \(pollInterval) is outside 0.001...10 s")
        }
    }
}
