import AetherIO
import Testing

@testable import AetherTransport

/// `BackendDetector`'s rules without a server: which headers offer which protocol, which protocol is chosen (every
/// combination of offers, forced or not), which destinations are refused, and the one request it sends.
@Suite struct BackendDetectorTests {
    static let url = "http://127.0.0.1:9/uploads?token=secret"

    static func code(_ body: () throws(TransportError) -> some Any) -> TransportError? {
        do {
            _ = try body()
            return nil
        } catch {
            return error
        }
    }

    /// Every subset of the three HTTP protocols.
    static let subsets: [Set<TransportMode>] = (0..<8).map { bits in
        Set(TransportMode.httpPreference.enumerated().filter { bits & (1 << $0.offset) != 0 }.map(\.element))
    }

    /// Header fields offering `modes`; IETF and tus each by either of their two fields.
    static func headers(offering modes: Set<TransportMode>, alternate: Bool) -> HTTPHeaders {
        var headers = HTTPHeaders([("Allow", "OPTIONS, POST"), ("Cache-Control", "no-store")])
        if modes.contains(.native) { headers.add("Aether-Capabilities", "v=1, parallel=16") }
        if modes.contains(.ietfResumable) {
            headers.add(alternate ? "Upload-Draft-Interop-Version" : "Upload-Limit", alternate ? "8" : "max-size=9")
        }
        if modes.contains(.tus) {
            headers.add(alternate ? "Tus-Resumable" : "Tus-Version", "1.0.0")
        }
        return headers
    }

    // MARK: What an answer offers

    @Test(arguments: subsets, [false, true])
    func aSuccessfulAnswerOffersExactlyTheProtocolsItsFieldsName(modes: Set<TransportMode>, alternate: Bool) {
        for status in [200, 204] {
            let offer = ProtocolOffer(status: status, headers: Self.headers(offering: modes, alternate: alternate))
            #expect(offer.modes == modes)
            #expect(offer.preferred == TransportMode.httpPreference.filter(modes.contains))
        }
    }

    @Test(arguments: subsets)
    func anAnswerWithoutOPTIONSSupportIsReadForIETFAndTusOnly(modes: Set<TransportMode>) {
        for status in [405, 501] {
            let offer = ProtocolOffer(status: status, headers: Self.headers(offering: modes, alternate: true))
            #expect(offer.modes == modes.subtracting([.native]))
        }
    }

    @Test(arguments: [301, 400, 401, 404, 500, 503])
    func anyOtherStatusOffersNothing(status: Int) {
        let all: Set<TransportMode> = [.native, .ietfResumable, .tus]
        #expect(ProtocolOffer(status: status, headers: Self.headers(offering: all, alternate: false)).modes.isEmpty)
    }

    @Test func aRefusedURLWithoutAPathNamesWhereAReceiverTakesUploads() {
        #expect(
            BackendDetector.rootHint("http://127.0.0.1:8080")
                == "; an aether serve receiver takes uploads at http://127.0.0.1:8080/uploads")
        #expect(
            BackendDetector.rootHint("https://h/?q=1")
                == "; an aether serve receiver takes uploads at https://h/uploads")
        #expect(BackendDetector.rootHint("http://h/files/").isEmpty)
        #expect(BackendDetector.rootHint("http://h/uploads").isEmpty)
        let error = #expect(throws: TransportError.self) {
            try BackendDetector.checkAnswered(ProtocolOffer(status: 400, headers: HTTPHeaders()), url: "http://h:1/")
        }
        #expect(error?.message.hasSuffix("takes uploads at http://h:1/uploads") == true)
    }

    @Test func fieldNamesAreMatchedWithoutRegardToCase() {
        let offer = ProtocolOffer(
            status: 204, headers: HTTPHeaders([("aether-capabilities", "v=1"), ("upload-limit", "max-size=1")]))
        #expect(offer.modes == [.native, .ietfResumable])
    }

    @Test func theAnsweredInteropVersionIsReadAsAnInteger() {
        #expect(ProtocolOffer(status: 204, headers: ["Upload-Draft-Interop-Version": "6"]).ietfInteropVersion == 6)
        #expect(ProtocolOffer(status: 204, headers: ["Upload-Draft-Interop-Version": "x"]).ietfInteropVersion == nil)
        #expect(ProtocolOffer(status: 204, headers: ["Upload-Limit": "max-size=1"]).ietfInteropVersion == nil)
    }

    // MARK: The choice

    /// The expected choice among `offered` without a forced protocol when native is not spoken (a build or a
    /// caller that leaves it out).
    static let expectedWithoutNative: [Set<TransportMode>: TransportMode?] = [
        []: nil, [.native]: nil, [.ietfResumable]: .ietfResumable, [.tus]: .tus,
        [.native, .ietfResumable]: .ietfResumable, [.native, .tus]: .tus, [.ietfResumable, .tus]: .ietfResumable,
        [.native, .ietfResumable, .tus]: .ietfResumable,
    ]

    @Test func thisBuildSpeaksNativeIETFAndTus() {
        #expect(BackendDetector.spokenOverHTTP == [.native, .ietfResumable, .tus])
    }

    @Test(arguments: subsets)
    func withoutAForcedProtocolTheFirstSpokenOfNativeIETFAndTusIsChosen(offered: Set<TransportMode>) throws {
        let expected = try #require(Self.expectedWithoutNative[offered])
        let result = Result { () throws(TransportError) in
            try BackendDetector.choose(
                offered: offered, forcing: nil, spoken: [.ietfResumable, .tus], url: Self.url)
        }
        switch (result, expected) {
        case (.success(let choice), let mode?):
            #expect(choice.mode == mode)
            // The reason is given exactly when native was offered and passed over.
            #expect((choice.fallbackReason != nil) == offered.contains(.native))
            if let reason = choice.fallbackReason {
                #expect(reason.contains("native") && reason.contains("using \(mode)"))
            }
        case (.failure(let error), nil):
            #expect(error.code == .protocolUnsupported)
            #expect(error.message.contains("http://127.0.0.1:9/uploads"))
            #expect(!error.message.contains("secret"))
            #expect(error.message.contains("native") == offered.contains(.native))
        default:
            Issue.record("offered \(offered): got \(result), expected \(String(describing: expected))")
        }
    }

    @Test(arguments: subsets)
    func onceNativeIsBuiltItIsPreferredToEverythingElse(offered: Set<TransportMode>) throws {
        let all: Set<TransportMode> = [.native, .ietfResumable, .tus]
        let result = Result { () throws(TransportError) in
            try BackendDetector.choose(offered: offered, forcing: nil, spoken: all, url: Self.url)
        }
        if let first = TransportMode.httpPreference.first(where: offered.contains) {
            #expect(try result.get().mode == first)
            #expect(try result.get().fallbackReason == nil)
        } else {
            #expect(throws: TransportError.self) { try result.get() }
        }
    }

    @Test(arguments: subsets, [TransportMode.native, .ietfResumable, .tus])
    func aForcedProtocolIsChosenOnlyWhenOfferedAndSpoken(offered: Set<TransportMode>, forced: TransportMode) {
        let error = Self.code {
            () throws(TransportError) in
            let choice = try BackendDetector.choose(
                offered: offered, forcing: forced, spoken: [.ietfResumable, .tus], url: Self.url)
            #expect(choice.mode == forced)
            #expect(choice.fallbackReason == nil)
            return choice.mode
        }
        let usable = offered.contains(forced) && forced != .native
        #expect((error == nil) == usable)
        if let error {
            #expect(error.code == .protocolUnsupported)
            #expect(error.message.contains("\(forced)"))
        }
    }

    // MARK: The status of the answer

    @Test(arguments: [
        (401, TransportError.Code.accessDenied), (403, .accessDenied), (404, .gone), (410, .gone),
        (302, .remoteRejected), (400, .remoteRejected), (500, .serverFailed), (503, .serverFailed),
        (405, .protocolUnsupported), (501, .protocolUnsupported), (101, .protocolViolation),
    ])
    func anAnswerThatIsNotASuccessIsATypedErrorNamingTheURL(status: Int, code: TransportError.Code) {
        let offer = ProtocolOffer(status: status, headers: ["Allow": "POST"])
        let error = Self.code { () throws(TransportError) in try BackendDetector.checkAnswered(offer, url: Self.url) }
        #expect(error?.code == code)
        #expect(error?.message.contains("http://127.0.0.1:9/uploads") == true)
        #expect(error?.message.contains("secret") == false)
    }

    @Test func aServerWithoutOPTIONSSupportIsStillUsedWhenItsAnswerNamesAProtocol() throws {
        for status in [200, 204, 405, 501] {
            let offer = ProtocolOffer(status: status, headers: ["Upload-Draft-Interop-Version": "8"])
            try BackendDetector.checkAnswered(offer, url: Self.url)
        }
    }

    // MARK: Destinations

    @Test(arguments: [
        ("s3://bucket/key", "s3", "s3://bucket/key"), ("S3://my.bucket/a/b.bin", "s3", "s3://my.bucket/a/b.bin"),
        ("http://127.0.0.1:8080/uploads", "http", "http://127.0.0.1:8080/uploads"),
        ("HTTPS://Example.com/up?x=1#frag", "http", "https://Example.com/up?x=1"),
        ("http://[::1]:9000", "http", "http://[::1]:9000/"),
    ])
    func destinationsAreParsedIntoS3ObjectsAndHTTPURLs(text: String, kind: String, expected: String) throws {
        switch try BackendDetector.parse(text) {
        case .s3(let object):
            #expect(kind == "s3")
            #expect(object.description == expected)
        case .http(let url):
            #expect(kind == "http")
            #expect(url == expected)
        }
    }

    @Test(arguments: [
        "", "uploads", "localhost:8080/uploads", "://host/x", "ftp://host/x", "file:///etc/passwd", "s3:/bucket/key",
        "h ttp://host/", "http:/host/x", "http://", "http:///path", "http://host:99999/", "http://host:8a/",
        "http://host/a b", "http://hôst/", "http://[::1/", "s3://bucket", "s3://Bad_Bucket/key", "s3://bucket/",
        "s3://bucket/a/../b", "gopher://x", "http://host/\u{7}",
    ])
    func anythingElseIsAnInvalidArgument(text: String) {
        let error = Self.code { () throws(TransportError) in try BackendDetector.parse(text) }
        #expect(error?.code == .invalidArgument)
    }

    @Test(arguments: [
        "http://user:hunter2@host/uploads", "https://hunter2@host", "http://user:hunter2@127.0.0.1:80/?x=@",
        "HTTPS://a:hunter2@b@host/",
    ])
    func aURLWithUserInformationIsRefusedWithoutRepeatingIt(text: String) {
        let error = Self.code { () throws(TransportError) in try BackendDetector.parse(text) }
        #expect(error?.code == .invalidArgument)
        #expect(error?.message.contains("user information") == true)
        #expect(error?.message.contains("hunter2") == false)
    }

    @Test func anAtSignAfterTheHostIsNotUserInformation() throws {
        #expect(try BackendDetector.parse("http://host/a@b?c=@d") == .http("http://host/a@b?c=@d"))
    }

    // MARK: The request

    @Test(arguments: IETFInteropVersion.allCases)
    func theOneRequestIsAnOPTIONSWithTheInteropVersionAndTheCallersFields(version: IETFInteropVersion) throws {
        let options = BackendDetector.Options(headers: ["Authorization": "Bearer t"], ietfVersion: version)
        let request = BackendDetector.optionsRequest(for: "http://127.0.0.1:9/uploads", options: options)
        #expect(request.method == "OPTIONS")
        #expect(request.url == "http://127.0.0.1:9/uploads")
        #expect(request.requestTarget == nil)
        #expect(request.headers.fields.map(\.name) == ["Authorization", "Upload-Draft-Interop-Version"])
        #expect(request.headers["Upload-Draft-Interop-Version"] == "\(version.rawValue)")
        #expect(!request.headers.contains("Tus-Resumable"))
        #expect(!request.headers.contains("Upload-Complete"))
        #expect(request.body.isEmpty)
        #expect(request.body.length == 0)
    }

    // MARK: Backends built from an answer (no request is sent)

    static func detector(_ options: BackendDetector.Options = .init()) throws -> (BackendDetector, HTTPClient) {
        let client = try HTTPClient(configuration: HTTPClientConfiguration(proxy: .none))
        return (BackendDetector(client: client, options: options), client)
    }

    @Test(arguments: [(nil, IETFInteropVersion.latest), ("6", .draft05), ("8", .latest)])
    func theIETFBackendSpeaksTheVersionTheServerAnswered(answered: String?, expected: IETFInteropVersion) throws {
        let (detector, client) = try Self.detector()
        defer { client.shutDown() }
        var headers: HTTPHeaders = ["Upload-Limit": "max-size=4096, max-append-size=1024"]
        if let answered { headers.add("Upload-Draft-Interop-Version", answered) }
        let backend = try detector.build(
            .ietfResumable, url: "http://127.0.0.1:9/up", offer: ProtocolOffer(status: 204, headers: headers))
        let ietf = try #require(backend as? IETFResumableBackend)
        #expect(ietf.version == expected)
        #expect(ietf.limits?.maximumSize == 4096)
        #expect(ietf.capabilities.maximumObjectSize == 4096)
        #expect(ietf.capabilities.maximumPartSize == 1024)
    }

    @Test(arguments: ["7", "5", "99999999999999"])
    func anInteropVersionThisClientDoesNotSpeakIsVersionUnsupported(answered: String) throws {
        let (detector, client) = try Self.detector()
        defer { client.shutDown() }
        let offer = ProtocolOffer(status: 204, headers: ["Upload-Draft-Interop-Version": answered])
        let error = Self.code { () throws(TransportError) in
            try detector.build(.ietfResumable, url: "http://127.0.0.1:9/up", offer: offer)
        }
        #expect(error?.code == .versionUnsupported)
        #expect(error?.message.contains(answered) == true)
    }

    @Test func theTusBackendIsBuiltFromTheAnswersFieldsAndTheCallersHeaders() throws {
        let (detector, client) = try Self.detector(.init(headers: ["Authorization": "Bearer t"]))
        defer { client.shutDown() }
        let offer = ProtocolOffer(
            status: 204,
            headers: [
                "Tus-Resumable": "1.0.0", "Tus-Version": "1.0.0", "Tus-Extension": "creation,termination",
                "Tus-Max-Size": "5000",
            ])
        let tus = try #require(try detector.build(.tus, url: "http://127.0.0.1:9/files/", offer: offer) as? TusBackend)
        #expect(tus.server.extensions == ["creation", "termination"])
        #expect(tus.capabilities.maximumObjectSize == 5000)
    }

    @Test(arguments: [
        ("Tus-Resumable", "1.0.0", TransportError.Code.protocolViolation),
        ("Tus-Version", "0.2.2", .versionUnsupported),
        ("Tus-Version", "1.0.0", .remoteRejected),
    ])
    func aTusAnswerThatCannotBeUsedIsATypedError(name: String, value: String, code: TransportError.Code) throws {
        let headers = HTTPHeaders([(name, value)])
        let (detector, client) = try Self.detector()
        defer { client.shutDown() }
        let error = Self.code { () throws(TransportError) in
            try detector.build(
                .tus, url: "http://127.0.0.1:9/files/", offer: ProtocolOffer(status: 204, headers: headers))
        }
        #expect(error?.code == code)
    }

    @Test func anS3DestinationGivesTheS3BackendWithoutARequest() async throws {
        let chain = S3CredentialChain(environment: [
            "AWS_ACCESS_KEY_ID": "AKIDEXAMPLE", "AWS_SECRET_ACCESS_KEY": "wJalrXUtnFEMI", "AWS_REGION": "eu-west-1",
        ])
        // Port 9 (discard) is closed here: any request would fail with another code than success.
        let (detector, client) = try Self.detector(
            .init(s3Endpoint: "http://127.0.0.1:9", s3Flavor: .minio, s3Credentials: chain))
        defer { client.shutDown() }
        let detected = try await detector.detect("s3://bucket/dir/object.bin")
        #expect(detected.mode == .s3Multipart)
        #expect(detected.offer == nil)
        #expect(detected.fallbackReason == nil)
        let s3 = try #require(detected.backend as? S3Backend)
        #expect(s3.destination == (try S3Destination(bucket: "bucket", key: "dir/object.bin")))
        #expect(s3.endpoint.region == "eu-west-1")
        #expect(s3.flavor == .minio)
        #expect(s3.objectURL == "http://127.0.0.1:9/bucket/dir/object.bin")
        let forced = try await detector.detect("s3://bucket/k", forcing: .s3Multipart)
        #expect(forced.mode == .s3Multipart)
    }

    @Test(arguments: [
        ("s3://bucket/key", TransportMode.ietfResumable), ("s3://bucket/key", .tus), ("s3://bucket/key", .native),
        ("http://127.0.0.1:9/uploads", .s3Multipart),
    ])
    func aForcedProtocolThatCannotReachTheSchemeIsRefusedBeforeAnyRequest(
        destination: String, forced: TransportMode
    ) async throws {
        let (detector, client) = try Self.detector(
            .init(s3Endpoint: "http://127.0.0.1:9", s3Credentials: S3CredentialChain(environment: [:])))
        defer { client.shutDown() }
        do {
            _ = try await detector.detect(destination, forcing: forced)
            Issue.record("detected")
        } catch {
            // A request to port 9 would have failed with .connectionRefused.
            #expect(error.code == .invalidArgument)
        }
    }

    @Test(arguments: ["ftp://host/x", "http://u:p@127.0.0.1:9/", "http://127.0.0.1:9/a b", "not a url"])
    func detectRefusesABadDestinationBeforeAnyRequest(destination: String) async throws {
        let (detector, client) = try Self.detector()
        defer { client.shutDown() }
        do {
            _ = try await detector.detect(destination)
            Issue.record("detected")
        } catch {
            #expect(error.code == .invalidArgument)
        }
    }
}
