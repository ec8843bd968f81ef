import AetherIO
import Glibc

/// How a capture still being written is followed (`aether upload --follow DIR DEST`).
public struct CaptureFollow: Sendable, Hashable {
    /// The job ends when nothing was added or changed for this long, no file is open for writing and every file
    /// is at the destination (seconds).
    public var idleSeconds: Double
    /// A file whose appearance at the top of the folder ends the job once every other file is closed and sent
    /// (the marker itself is not uploaded); nil: only the idle rule ends it.
    public var marker: String?
    /// A file goes once no process holds it open for writing and it has not changed for this long (seconds).
    public var quietSeconds: Double
    /// How often the folder is looked at (seconds).
    public var pollInterval: Double

    public init(idleSeconds: Double = 5, marker: String? = nil, quietSeconds: Double = 1, pollInterval: Double = 0.25) {
        self.idleSeconds = idleSeconds
        self.marker = marker
        self.quietSeconds = quietSeconds
        self.pollInterval = pollInterval
    }

    /// Refuses seconds outside 0...86400, a poll interval outside (0, 60] and a marker that is not a plain name.
    public func validate() throws(UploaderError) {
        for value in [idleSeconds, quietSeconds] where !(value.isFinite && value >= 0 && value <= 86_400) {
            throw UploaderError(.invalidArgument, "the follow's seconds must be 0...86400")
        }
        guard pollInterval.isFinite, pollInterval > 0, pollInterval <= 60 else {
            throw UploaderError(.invalidArgument, "the follow's poll interval must be above 0 and at most 60 s")
        }
        if let marker, marker.isEmpty || marker.contains("/") || marker == "." || marker == ".." {
            throw UploaderError(.invalidArgument, "the marker is a file name at the top of the folder, without /")
        }
    }
}

extension CaptureJob {
    /// Follows the folder: each round walks it, sends every file that is closed and quiet and not yet at the
    /// destination in this version (the journal's fingerprint), and sleeps; a file changed after it was sent goes
    /// again. The job ends on the marker (once every file is closed and sent) or after `idleSeconds` without a
    /// change, then stores the manifest over the last version of every file. A crash of either side loses nothing
    /// sent: the journal and each file's snapshot survive it, and the same command continues.
    func followed(_ follow: CaptureFollow, _ job: Run) async throws -> CaptureOutcome {
        var results: [[UInt8]: CaptureFileResult] = [:]
        /// The version of each file at the destination (its fingerprint when sent).
        var sent: [[UInt8]: CaptureFile] = [:]
        var failed: [[UInt8]: (failure: CaptureFailure, file: CaptureFile)] = [:]
        var reported: Set<String> = []
        var lastSeen: [[UInt8]: CaptureFile] = [:]
        var lastChange = ContinuousClock.now
        var started = false
        var skips: [CaptureSkip] = []
        var unreadable: [CaptureFailure] = []
        let marker = follow.marker.map { Array($0.utf8) }
        while true {
            try Task.checkCancellation()
            let walk = try CaptureWalk.walk(directory, rules: job.rules)
            var files: [CaptureFile]
            (files, skips, unreadable) = Self.split(walk)
            let ending = marker.map { name in files.contains { $0.relativePath == name } } ?? false
            if let marker { files.removeAll { $0.relativePath == marker } }
            for skip in skips where reported.insert(skip.path).inserted {
                job.emit(.skipped(path: skip.path, reason: skip.reason))
            }
            for failure in unreadable where reported.insert(failure.path).inserted { job.emit(.fileFailed(failure)) }
            let seen = Dictionary(files.map { ($0.relativePath, $0) }, uniquingKeysWith: { first, _ in first })
            if seen != lastSeen {
                lastSeen = seen
                lastChange = .now
            }
            for file in files where sent[file.relativePath] != file {
                if let entry = job.journal.finished(file), let result = Self.result(file, entry) {
                    results[file.relativePath] = result
                    sent[file.relativePath] = file
                }
            }
            if !started {
                started = true
                job.emit(
                    .started(
                        CaptureTotals(
                            files: files.count, bytes: files.reduce(0) { $0 + $1.size }, alreadyUploaded: results.count,
                            skipped: skips.count)))
                for result in results.values { job.emit(.fileCompleted(result)) }
            }
            // Files not at the destination in this version; a file that failed is tried again only once it changed.
            let candidates = files.filter { file in
                sent[file.relativePath] != file && failed[file.relativePath]?.file != file
            }
            // /proc is read only when some file waits to go (a look at every descriptor of every process).
            let writers = candidates.isEmpty ? [] : OpenWriters.scan()
            let now = Self.wallSeconds()
            var waiting = false
            var ready: [CaptureFile] = []
            for file in candidates {
                // Without /proc no writer can be seen: then only the marker says the files are closed.
                let open =
                    writers.map { $0.contains(OpenWriters.Identity(device: file.device, inode: file.inode)) }
                    ?? !ending
                let quiet = now - Double(file.modificationNanoseconds) / 1e9 >= (ending ? 0 : follow.quietSeconds)
                if !open && quiet { ready.append(file) } else { waiting = true }
            }
            if !ready.isEmpty {
                let tally = CaptureTally(files: files, done: files.compactMap { results[$0.relativePath] })
                let round = try await upload(ready, job, tally: tally)
                let byPath = Dictionary(ready.map { ($0.relativePath, $0) }, uniquingKeysWith: { first, _ in first })
                for result in round.results {
                    results[result.relativePath] = result
                    sent[result.relativePath] = byPath[result.relativePath]
                    failed[result.relativePath] = nil
                }
                for failure in round.failed {
                    if let file = ready.first(where: { $0.name == failure.path }) {
                        failed[file.relativePath] = (failure, file)
                    }
                }
                lastChange = .now
                continue
            }
            let idle = lastChange.duration(to: .now) >= .seconds(follow.idleSeconds)
            if !waiting && (ending || idle) {
                let present = Set(files.map(\.relativePath))
                return try await finish(
                    results: results.values.filter { present.contains($0.relativePath) },
                    failed: unreadable + failed.filter { present.contains($0.key) }.map(\.value.failure), skips: skips,
                    job)
            }
            try await Task.sleep(for: .milliseconds(Int64(follow.pollInterval * 1000)))
        }
    }

    static func wallSeconds() -> Double {
        var now = timespec()
        _ = unsafe clock_gettime(CLOCK_REALTIME, &now)
        return Double(now.tv_sec) + Double(now.tv_nsec) / 1e9
    }
}
