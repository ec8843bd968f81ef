import AetherIO
import AetherTransport

/// One resumable-upload protocol on `/uploads` (native, tus, IETF): how its requests are told apart and how it
/// answers them, so the router dispatches without switching on the protocol.
protocol UploadProtocolHandler {
    /// The protocol its uploads are stored under.
    static var uploadProtocol: UploadProtocol { get }
    /// Whether `request` is in this protocol (by the fields that name it).
    static func speaks(_ request: HTTPServerRequest) -> Bool
    /// Whether the protocol appends with `PATCH /uploads/{id}`.
    static var appendsWithPatch: Bool { get }
    /// The header fields its error answers carry.
    static var answerFields: [(name: String, value: String)] { get }
    /// An answer refusing `request` before anything else (a version the receiver does not speak); nil otherwise.
    static func refusal(_ request: HTTPServerRequest) -> HTTPServerResponse?
    /// `POST /uploads`.
    static func create(_ request: HTTPServerRequest, owner: ClientIdentity, context: ReceiverContext)
        -> HTTPRequestStart
    /// `HEAD /uploads/{id}` of an upload stored under this protocol.
    static func head(_ request: HTTPServerRequest, status: UploadStatus, context: ReceiverContext)
        -> HTTPServerResponse
    /// `PATCH /uploads/{id}` (only when `appendsWithPatch`).
    static func append(_ request: HTTPServerRequest, id: UploadID, owner: ClientIdentity, context: ReceiverContext)
        -> HTTPRequestStart
}

/// The protocols the receiver speaks, in the order a creation is matched against them.
enum UploadProtocols {
    static var all: [any UploadProtocolHandler.Type] { [NativeHandler.self, TusHandler.self, IETFHandler.self] }

    /// The protocol `request` names; nil when it names none.
    static func speaking(_ request: HTTPServerRequest) -> (any UploadProtocolHandler.Type)? {
        all.first { $0.speaks(request) }
    }

    /// The handler of uploads stored under `uploadProtocol`.
    static func handler(of uploadProtocol: UploadProtocol) -> any UploadProtocolHandler.Type {
        all.first { $0.uploadProtocol == uploadProtocol } ?? IETFHandler.self
    }

    /// The handler of a `PATCH`: the one the request names, else IETF (whose append explains what is missing).
    static func appending(_ request: HTTPServerRequest) -> any UploadProtocolHandler.Type {
        all.first { $0.appendsWithPatch && $0.speaks(request) } ?? IETFHandler.self
    }
}

extension NativeHandler: UploadProtocolHandler {
    static let uploadProtocol = UploadProtocol.native
    static let appendsWithPatch = false
    static var answerFields: [(name: String, value: String)] { protocolHeaders }

    static func speaks(_ request: HTTPServerRequest) -> Bool { request.has(AetherWire.protocolField) }

    static func refusal(_ request: HTTPServerRequest) -> HTTPServerResponse? {
        guard request.header(AetherWire.protocolField) == "1" else {
            return problem(ReceiverError(.malformedRequest, "Aether-Protocol must be 1"))
        }
        return nil
    }

    static func head(_ request: HTTPServerRequest, status: UploadStatus, context: ReceiverContext)
        -> HTTPServerResponse
    {
        var response = HTTPServerResponse(status: 200, headers: headFields(status))
        if let size = status.record.size { response.add("Upload-Length", String(size)) }
        return response
    }

    /// Native chunks go with `PUT .../chunks/{i}`; never reached (`appendsWithPatch` is false).
    static func append(_ request: HTTPServerRequest, id: UploadID, owner: ClientIdentity, context: ReceiverContext)
        -> HTTPRequestStart
    {
        .respond(
            ProblemResponse.make(
                ReceiverError(.malformedRequest, "native chunks are sent with PUT"), status: 405,
                headers: protocolHeaders))
    }
}

extension TusHandler: UploadProtocolHandler {
    static let uploadProtocol = UploadProtocol.tus
    static let appendsWithPatch = true
    static var answerFields: [(name: String, value: String)] { resumable }

    static func speaks(_ request: HTTPServerRequest) -> Bool { request.has("Tus-Resumable") }

    static func refusal(_ request: HTTPServerRequest) -> HTTPServerResponse? { checkVersion(request) }

    static func head(_ request: HTTPServerRequest, status: UploadStatus, context: ReceiverContext)
        -> HTTPServerResponse
    {
        head(status)
    }
}

extension IETFHandler: UploadProtocolHandler {
    static let uploadProtocol = UploadProtocol.ietf
    static let appendsWithPatch = true
    static let answerFields: [(name: String, value: String)] = []

    static func speaks(_ request: HTTPServerRequest) -> Bool {
        request.has("Upload-Draft-Interop-Version") || request.has("Upload-Complete")
    }

    /// Each IETF answer names its interop version itself; nothing is refused up front.
    static func refusal(_ request: HTTPServerRequest) -> HTTPServerResponse? { nil }
}
