import Foundation

/// `peers/tus_peer.py` serving `tuspyserver` (the FastAPI router mounted in the app file written here, on uvicorn)
/// and a small checksum-checking tus server of our own, both on 127.0.0.1. One per test process; it exits when
/// this process closes its stdin.
final class TusPeerProcess: @unchecked Sendable {
    // @unchecked: every stored property is set once in init and only read afterwards.
    let directory: URL
    let tus: UInt16
    let checksum: UInt16
    /// Held for the life of the test process: the peer serves until its stdin closes.
    private let peer: LongRunningPeer

    /// The app: one router per behaviour, each with its own upload directory.
    static let app = """
        import os
        from fastapi import FastAPI
        from tuspyserver import create_tus_router

        here = os.path.dirname(os.path.abspath(__file__))
        app = FastAPI()
        # Uploads kept five days (Upload-Expires in the future).
        app.include_router(create_tus_router(prefix="files", files_dir=os.path.join(here, "files")))
        # Uploads that expired a day before they were created.
        app.include_router(
            create_tus_router(prefix="expired", files_dir=os.path.join(here, "expired"), days_to_keep=-1))
        # Tus-Max-Size: 1000.
        app.include_router(
            create_tus_router(prefix="small", files_dir=os.path.join(here, "small"), max_size=1000))
        """

    static let shared: Result<TusPeerProcess, any Error> = Result { try TusPeerProcess() }

    static func get() throws -> TusPeerProcess { try shared.get() }

    /// A peer of the caller's own, for a test that wedges tuspyserver: a PATCH held open keeps its upload lock,
    /// and every later request to that upload waits 30 s for it in one of the few threads `asyncio.to_thread`
    /// has (six on two cores) that every file operation of every upload shares, so the shared peer would stall
    /// the other tests' uploads for minutes. It exits when the value goes.
    static func dedicated() throws -> TusPeerProcess { try TusPeerProcess() }

    private init() throws {
        directory = try LongRunningPeer.makeDirectory("tus")
        try Data(Self.app.utf8).write(to: directory.appendingPathComponent("app.py"))
        let (peer, ports) = try LongRunningPeer.startListening("tus_peer.py", [directory.path])
        self.peer = peer
        (tus, checksum) = try (ports.port("tus"), ports.port("checksum"))
    }

    /// A creation URL on tuspyserver (`files`, `expired`, `small`).
    func tusURL(_ router: String) -> String { "http://127.0.0.1:\(tus)/\(router)/" }

    /// A creation URL on the checksum server in `mode`.
    func checksumURL(_ mode: String) -> String { "http://127.0.0.1:\(checksum)/\(mode)/" }

    /// The bytes tuspyserver stored for the upload at `location` under `router`.
    func storedOnTusServer(_ router: String, _ location: String) throws -> [UInt8] {
        let id = String(location.split(separator: "/").last ?? "")
        return try [UInt8](Data(contentsOf: directory.appendingPathComponent("\(router)/\(id)")))
    }

    /// The metadata tuspyserver recorded for the upload at `location` under `router` (its `ID.info` file).
    func metadata(_ router: String, _ location: String) throws -> [String: String] {
        let id = String(location.split(separator: "/").last ?? "")
        let info = try Data(contentsOf: directory.appendingPathComponent("\(router)/\(id).info"))
        let object = try JSONSerialization.jsonObject(with: info) as? [String: Any]
        return object?["metadata"] as? [String: String] ?? [:]
    }

    /// Whether tuspyserver still has a file for `location` under `router`.
    func existsOnTusServer(_ router: String, _ location: String) -> Bool {
        let id = String(location.split(separator: "/").last ?? "")
        return FileManager.default.fileExists(atPath: directory.appendingPathComponent("\(router)/\(id)").path)
    }

    /// The bytes the checksum server stored for `location`.
    func storedOnChecksumServer(_ location: String) throws -> [UInt8] {
        let id = String(location.split(separator: "/").last ?? "")
        return try [UInt8](Data(contentsOf: directory.appendingPathComponent("checksum/\(id)")))
    }
}

/// One request as the checksum server logged it.
struct TusLoggedRequest: Decodable {
    let method: String
    let path: String
    let length: Int
    let headers: [String: String]
}
