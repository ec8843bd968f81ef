import AetherIO
import AetherReceiver
import AetherTestSupport
import AetherTransport
import Foundation
import Synchronization

/// The receiver's request layer: the real `ReceiverRouter` (routing, authentication, the native, IETF and tus
/// handlers, their header parsers) over a real engine (directory store and SQLite catalogue on a fresh temporary
/// directory per input, under /dev/shm when it exists), driven by a script of requests written like HTTP:
///
/// ```
/// METHOD PATH [remote] [cut] [split]      (remote: not loopback; cut: the body is interrupted; split: 2 pieces)
/// Name: value                              (header lines, any number, duplicates kept)
///                                          (an empty line, then the body up to the next separator)
/// ~~~                                      (separator: the next request)
/// ```
///
/// `$ID` in a path or header value stands for the upload created last (its `Location`), `$PREV` for the one
/// before; `@advance N` as a request line moves the clock N seconds, `@expire` runs the expiry sweep.
/// Properties: no crash or hang; every answer's status is 2xx ... 5xx; every error answer carries an RFC 9457
/// problem document (`application/problem+json`) with the same status; a `Location` names an upload
/// (`/uploads/{26 base32}`); nothing is created outside the store directory, and inside it only the store's own
/// layout (`chunks/ID/N`, `parity/ID/G.S`, `streams/ID`, `objects/ID`, `staging/*`, the catalogue).
func fuzzInput(_ bytes: UnsafeRawBufferPointer) {
    let script = unsafe Array(bytes)
    let sandbox = Sandbox.make()
    defer { sandbox.remove() }
    let clock = ManualClock()
    let engine: UploadEngine
    do {
        let counter = Atomic<UInt64>(0)
        engine = UploadEngine(
            blobs: try DirectoryBlobStore(root: sandbox.store), catalog: try SQLiteUploadCatalog(path: sandbox.catalog),
            limits: ReceiverLimits(
                maximumObjectSize: 1 << 20, minimumChunkSize: 16 * 1024, maximumChunkSize: 64 * 1024,
                maximumChunks: 64, maximumOpenUploadsPerClient: 8, expirySeconds: 600, maximumMetadataBytes: 1024),
            clock: clock,
            random: { count in
                // Deterministic ids, so a crashing input replays exactly.
                let seed = counter.add(1, ordering: .relaxed).newValue
                return (0..<count).map {
                    UInt8(truncatingIfNeeded: (seed &* 0x9E37_79B9_7F4A_7C15) >> UInt64(($0 % 8) * 8))
                }
            })
    } catch {
        FuzzCheck.fail("the engine does not start on \(sandbox.store): \(error)")
    }
    let router = ReceiverRouter(
        engine: engine, tokens: nil, metrics: ReceiverMetrics(), log: RequestLog(format: .json, sink: { _ in }),
        clock: clock)
    var created: [String] = []
    for block in split(script, separator: Array("\n~~~\n".utf8)).prefix(12) {
        guard let request = ScriptedRequest(block, created: created) else { continue }
        switch request.kind {
        case .advance(let seconds): clock.advance(by: .seconds(seconds))
        case .expire: _ = try? engine.expire()
        case .http(let http, let body, let cut, let split):
            let response = run(router, http, body: body, cut: cut, split: split)
            FuzzCheck.accepted("\(http.method.prefix(16)) \(http.path.prefix(80)) -> \(response?.status ?? 0)")
            if let response {
                check(response, http)
                if let location = response.header("Location"), !created.contains(location) {
                    created.append(location)
                }
            }
        }
    }
    sandbox.checkLayout()
}

/// Starts `request` on `router`, streams `body` into a sink, and returns the answer (nil when cut short).
private func run(_ router: ReceiverRouter, _ request: HTTPServerRequest, body: [UInt8], cut: Bool, split: Bool)
    -> HTTPServerResponse?
{
    let answer: HTTPServerResponse?
    switch router.start(request) {
    case .respond(let response): answer = response
    case .stream(let sink):
        let pieces = split && body.count > 1 ? [body[..<(body.count / 2)], body[(body.count / 2)...]] : [body[...]]
        for piece in pieces { unsafe piece.withUnsafeBytes { unsafe sink.receive($0) } }
        if cut {
            sink.interrupted()
            answer = nil
        } else {
            answer = sink.finish()
        }
    }
    router.ended(request, status: answer?.status, bytesReceived: Int64(body.count), nanoseconds: 1000)
    return answer
}

/// The properties every answer has.
private func check(_ response: HTTPServerResponse, _ request: HTTPServerRequest) {
    let what = "\(request.method.prefix(16)) \(request.path.prefix(80))"
    FuzzCheck.require((200...599).contains(response.status), "\(what): status \(response.status) is not 2xx-5xx")
    if response.status >= 400 {
        FuzzCheck.require(
            response.header("Content-Type") == AetherWire.problemMediaType,
            "\(what): error \(response.status) without application/problem+json")
        // A HEAD answer has no body (the router drops it); every other error carries the problem document.
        if request.method != "HEAD" {
            guard let problem = try? ProblemDocument(json: response.body) else {
                FuzzCheck.fail("\(what): error \(response.status) whose body is no problem document")
            }
            FuzzCheck.require(problem.status == response.status, "\(what): problem status differs from the answer's")
        }
    }
    if let location = response.header("Location") {
        let parts = location.split(separator: "/", omittingEmptySubsequences: false)
        FuzzCheck.require(
            parts.count == 3 && parts[0].isEmpty && parts[1] == "uploads" && (try? UploadID(parts[2])) != nil,
            "\(what): Location \(location.prefix(80)) names no upload")
    }
}

/// One parsed script block.
private struct ScriptedRequest {
    enum Kind {
        case http(HTTPServerRequest, body: [UInt8], cut: Bool, split: Bool)
        case advance(Int64)
        case expire
    }

    let kind: Kind

    init?(_ block: ArraySlice<UInt8>, created: [String]) {
        let (head, body) = splitOnce(block, separator: Array("\n\n".utf8))
        let lines = split(head, separator: [0x0A]).map { String(decoding: $0, as: UTF8.self) }
        guard let first = lines.first else { return nil }
        func substitute(_ text: String) -> String {
            let last = created.last.map { String($0.dropFirst("/uploads/".count)) } ?? "aaaaaaaaaaaaaaaaaaaaaaaaaa"
            let previous = created.dropLast().last.map { String($0.dropFirst("/uploads/".count)) } ?? last
            return text.replacingOccurrences(of: "$ID", with: last).replacingOccurrences(of: "$PREV", with: previous)
        }
        let words = first.split(separator: " ", omittingEmptySubsequences: true).map(String.init)
        if words.first == "@advance" {
            kind = .advance(min(Int64(words.dropFirst().first ?? "") ?? 60, 10_000_000))
            return
        }
        if words.first == "@expire" {
            kind = .expire
            return
        }
        let method = words.first ?? ""
        let path = words.count > 1 ? substitute(words[1]) : "/"
        let flags = Set(words.dropFirst(2))
        var headers: [(name: String, value: String)] = []
        for line in lines.dropFirst().prefix(32) {
            guard let colon = line.firstIndex(of: ":") else {
                headers.append((line, ""))
                continue
            }
            var value = line[line.index(after: colon)...]
            if value.first == " " { value = value.dropFirst() }
            headers.append((String(line[..<colon]), substitute(String(value))))
        }
        let remote = flags.contains("remote")
        kind = .http(
            HTTPServerRequest(
                method: method, path: path, headers: headers, clientAddress: remote ? "192.0.2.7" : "127.0.0.1",
                isLoopback: !remote),
            body: Array(body ?? []), cut: flags.contains("cut"), split: flags.contains("split"))
    }
}

/// `bytes` cut at every `separator`.
private func split(_ bytes: some Collection<UInt8>, separator: [UInt8]) -> [ArraySlice<UInt8>] {
    var parts: [ArraySlice<UInt8>] = []
    var rest = ArraySlice(bytes)
    while true {
        let (part, after) = splitOnce(rest, separator: separator)
        parts.append(part)
        guard let after else { return parts }
        rest = after
    }
}

/// The bytes before the first `separator` and those after it (nil when there is none).
private func splitOnce(_ bytes: ArraySlice<UInt8>, separator: [UInt8]) -> (ArraySlice<UInt8>, ArraySlice<UInt8>?) {
    guard bytes.count >= separator.count else { return (bytes, nil) }
    var index = bytes.startIndex
    while index + separator.count <= bytes.endIndex {
        if bytes[index..<(index + separator.count)].elementsEqual(separator) {
            return (bytes[..<index], bytes[(index + separator.count)...])
        }
        index += 1
    }
    return (bytes, nil)
}

/// A fresh directory per input: `DIR/store` holds the store, and nothing else may appear in `DIR`.
private struct Sandbox {
    let directory: String
    var store: FilePath { FilePath(directory + "/store") }
    var catalog: FilePath { FilePath(directory + "/store/catalog.sqlite3") }

    static let base = FileManager.default.fileExists(atPath: "/dev/shm") ? "/dev/shm" : NSTemporaryDirectory()
    static let sequence = Atomic<Int>(0)

    static func make() -> Sandbox {
        let number = sequence.add(1, ordering: .relaxed).newValue
        let directory = "\(base)/aether-fuzz-receiver-\(ProcessInfo.processInfo.processIdentifier)-\(number)"
        do {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        } catch {
            FuzzCheck.fail("cannot make \(directory): \(error)")
        }
        return Sandbox(directory: directory)
    }

    func remove() { try? FileManager.default.removeItem(atPath: directory) }

    /// Nothing beside the store; inside it only the store's own layout.
    func checkLayout() {
        let beside = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
        FuzzCheck.require(beside == ["store"], "something was created beside the store: \(beside)")
        let root = directory + "/store"
        guard let walker = FileManager.default.enumerator(atPath: root) else { return }
        for case let relative as String in walker {
            FuzzCheck.require(Self.allowed(relative), "an unexpected path in the store: \(relative)")
        }
    }

    static func allowed(_ relative: String) -> Bool {
        let parts = relative.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
        let isID = { (text: String) in (try? UploadID(text)) != nil }
        let isNumber = { (text: String) in !text.isEmpty && text.utf8.allSatisfy { $0 >= 0x30 && $0 <= 0x39 } }
        switch parts.first {
        case "chunks":
            return parts.count == 1
                || (isID(parts[1]) && (parts.count == 2 || (parts.count == 3 && isNumber(parts[2]))))
        case "parity":
            guard parts.count > 1 else { return true }
            guard isID(parts[1]) else { return false }
            if parts.count == 2 { return true }
            let pair = parts[2].split(separator: ".", omittingEmptySubsequences: false).map(String.init)
            return parts.count == 3 && pair.count == 2 && pair.allSatisfy(isNumber)
        case "streams", "objects":
            return parts.count == 1 || (parts.count == 2 && isID(parts[1]))
        case "staging":
            return parts.count <= 2
        default:
            return parts.count == 1 && parts[0].hasPrefix("catalog.sqlite3")
        }
    }
}
