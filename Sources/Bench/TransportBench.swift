import AetherIO
import AetherTestSupport
import AetherTransport
import FoundationEssentials

#if canImport(Glibc)
    import Glibc
#endif

/// `transport`: the libcurl HTTP client against nginx on 127.0.0.1, configured by the bench in a temporary
/// directory (`return 204` after reading the body, `client_max_body_size 0`, bound to 127.0.0.1).
/// 1. A PUT of a file (1 GiB, or `--size-mib N`) streamed from the IO layer's chunks, against `curl -T` of the
///    same file to the same endpoint, alternating, in the same run.
/// 2. 64 parallel 16 KiB PUTs over one HTTP/2 (TLS) connection against 64 HTTP/1.1 PUTs (TLS, parallel, so on
///    up to 64 connections); a fresh client per run, connection set-up included.
/// Skips with a message when nginx, curl or openssl is missing (`scripts/install-deps.sh` installs them).
enum TransportBench: BenchSuite {
    static let name = "transport"
    static let runsByDefault = true
    static let summary = "libcurl HTTP client: 1 GiB PUT vs curl -T to local nginx; 64 small PUTs, h2 vs h1"

    static func run(options: [String]) async throws {
        var sizeMiB = 1024
        if let index = options.firstIndex(of: "--size-mib") {
            guard index + 1 < options.count, let value = Int(options[index + 1]), value > 0, value <= 65536 else {
                throw BenchError("--size-mib takes a whole number of MiB (1...65536)")
            }
            sizeMiB = value
        }
        guard NginxProcess.executable != nil else {
            print("transport: skipped: nginx is not installed (scripts/install-deps.sh installs it)")
            return
        }
        guard let curl = executable("curl"), let openssl = executable("openssl") else {
            print("transport: skipped: curl or openssl is not installed (scripts/install-deps.sh installs them)")
            return
        }
        let directory = "/tmp/aether-bench-transport-\(getpid())"
        guard unsafe mkdir(directory, 0o700) == 0 else { throw BenchError("cannot create \(directory)") }
        defer { _ = IOBaseline.run(["/bin/rm", "-rf", directory]) }
        let server = try NginxServer(openssl: openssl, directory: directory)
        defer { server.stop() }
        print("transport: libcurl \(HTTPClient.libcurlVersion), load average \(IOBench.loadAverage())")
        try await bulkPut(server: server, curl: curl, directory: directory, sizeMiB: sizeMiB)
        try await parallelSmall(server: server)
    }

    static func executable(_ name: String, extra: [String] = []) -> String? {
        let path = (unsafe getenv("PATH").map { unsafe String(cString: $0) } ?? "/usr/bin:/bin").split(separator: ":")
        for candidate in path.map({ "\($0)/\(name)" }) + extra where unsafe access(candidate, X_OK) == 0 {
            return candidate
        }
        return nil
    }

    // MARK: 1 GiB

    static func bulkPut(server: NginxServer, curl: String, directory: String, sizeMiB: Int) async throws {
        let path = "\(directory)/body.bin"
        let size = sizeMiB << 20
        try IOBench.makeRandomFile(path, size: size)
        let url = "http://127.0.0.1:\(server.plainPort)/upload"
        let client = try HTTPClient(configuration: HTTPClientConfiguration(proxy: .none))
        defer { client.shutDown() }

        func ours() async throws -> Double {
            let start = Measure.now()
            let stream = HTTPBodyStream(length: Int64(size), capacity: 4)
            let writer = Task {
                let reader = try FileChunkReader(path: path, options: ChunkReadOptions(strategy: .mmap, heldChunks: 6))
                while let chunk = try reader.next() { try await stream.write(chunk) }
                stream.finish()
            }
            let response = try await client.send(
                HTTPRequest(method: "PUT", url: url, body: .stream(stream), version: .http1))
            try await writer.value
            let seconds = Measure.now() - start
            guard response.status == 204, response.telemetry.bytesSent == Int64(size) else {
                throw BenchError("the PUT got \(response.status) after \(response.telemetry.bytesSent) bytes")
            }
            return seconds
        }
        func baseline() throws -> Double {
            let run = IOBaseline.run([curl, "-sS", "--fail", "-o", "/dev/null", "-T", path, url])
            guard run.status == 0 else { throw BenchError("curl -T exited \(run.status)") }
            return run.seconds
        }
        _ = try await ours()
        _ = try baseline()
        var oursTimes: [Double] = []
        var baselineTimes: [Double] = []
        for _ in 0..<5 {
            oursTimes.append(try await ours())
            baselineTimes.append(try baseline())
        }
        let label = Measure.sizeLabel(mebibytes: sizeMiB)
        let oursMedian = IOBench.median(oursTimes)
        let baselineMedian = IOBench.median(baselineTimes)
        Measure.line(
            "transport_put_\(label)", Measure.rate(bytes: size, seconds: oursMedian),
            ratios: [("ratio_vs_curl_T", baselineMedian / oursMedian)])
        print(
            Measure.pad("  curl -T", 28) + Measure.rate(bytes: size, seconds: baselineMedian)
                + "  (HTTP/1.1, loopback, median of 5)")
    }

    // MARK: 64 x 16 KiB

    static func parallelSmall(server: NginxServer) async throws {
        let url = "https://localhost:\(server.tlsPort)/small"
        let body = SecureRandom.bytes(16 << 10)
        let configuration = HTTPClientConfiguration(trustAnchorsFile: server.certificate, proxy: .none)

        func batch(_ version: HTTPVersionPreference) async throws -> (seconds: Double, connections: Int) {
            let client = try HTTPClient(configuration: configuration)
            defer { client.shutDown() }
            let start = Measure.now()
            let responses = try await withThrowingTaskGroup(of: HTTPResponse.self) { group in
                for _ in 0..<64 {
                    group.addTask {
                        try await client.send(
                            HTTPRequest(method: "PUT", url: url, body: .bytes(body), version: version))
                    }
                }
                var all: [HTTPResponse] = []
                for try await response in group { all.append(response) }
                return all
            }
            let seconds = Measure.now() - start
            guard responses.allSatisfy({ $0.status == 204 }) else { throw BenchError("a small PUT was refused") }
            let expected: HTTPProtocolVersion = version == .http2 ? .http2 : .http1
            guard responses.allSatisfy({ $0.telemetry.protocolVersion == expected }) else {
                throw BenchError("a small PUT did not use \(expected)")
            }
            return (seconds, responses.filter { !$0.telemetry.connectionReused }.count)
        }
        _ = try await batch(.http2)
        _ = try await batch(.http1)
        var h2: [Double] = []
        var h1: [Double] = []
        var h2Connections = 0
        var h1Connections = 0
        for _ in 0..<7 {
            let a = try await batch(.http2)
            let b = try await batch(.http1)
            h2.append(a.seconds)
            h1.append(b.seconds)
            h2Connections = max(h2Connections, a.connections)
            h1Connections = max(h1Connections, b.connections)
        }
        let h2Median = IOBench.median(h2)
        let h1Median = IOBench.median(h1)
        print(
            Measure.pad("transport_64x16KiB_h2", 28)
                + Measure.pad(Measure.formatted(64 / h2Median, decimals: 0) + " req/s", 14)
                + "ratio_vs_h1=\(Measure.formatted(h1Median / h2Median, decimals: 2))  connections=\(h2Connections)")
        print(
            Measure.pad("transport_64x16KiB_h1", 28)
                + Measure.pad(Measure.formatted(64 / h1Median, decimals: 0) + " req/s", 14)
                + "connections=\(h1Connections)  (TLS for both, fresh client per batch, median of 7)")
    }
}

/// nginx on 127.0.0.1 for the bench (through the shared `NginxProcess` launcher): one clear-text HTTP/1.1 port and
/// one TLS port (h2 and http/1.1 by ALPN, self-signed certificate for localhost made with openssl), `return 204` for
/// every request, bodies of any size.
struct NginxServer {
    let plainPort: Int
    let tlsPort: Int
    let certificate: String
    private let process: NginxProcess

    init(openssl: String, directory: String) throws {
        certificate = "\(directory)/cert.pem"
        let made = IOBaseline.run([
            openssl, "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-days", "1",
            "-subj", "/CN=localhost", "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1", "-keyout",
            "\(directory)/key.pem", "-out", certificate,
        ])
        guard made.status == 0 else { throw BenchError("openssl could not make the bench certificate") }
        process = try NginxProcess(directory: "\(directory)/nginx", portCount: 2, seed: 20_000) { ports in
            Self.httpBlock(directory: directory, plain: ports[0], tls: ports[1])
        }
        (plainPort, tlsPort) = (process.ports[0], process.ports[1])
    }

    static func httpBlock(directory: String, plain: Int, tls: Int) -> String {
        """
            client_max_body_size 0;
            keepalive_requests 100000;
            http2_max_concurrent_streams 128;
            upstream sink {
                server 127.0.0.1:\(plain);
                keepalive 64;
            }
            server {
                listen 127.0.0.1:\(plain);
                listen 127.0.0.1:\(tls) ssl http2;
                ssl_certificate \(directory)/cert.pem;
                ssl_certificate_key \(directory)/key.pem;
                # HTTP/1.1: `return` discards (reads) the whole body to keep the connection.
                location / { return 204; }
                # The small PUTs: read the whole body into memory first (the proxy module always reads it),
                # then answer 204 through a bodiless keep-alive hop. Over HTTP/2, a `return` that answers
                # before the body is read resets streams libcurl 7.88 is still sending on.
                location /small {
                    client_body_buffer_size 64k;
                    proxy_pass http://sink/;
                    proxy_pass_request_body off;
                    proxy_set_header Content-Length "";
                    proxy_http_version 1.1;
                    proxy_set_header Connection "";
                }
            }
        """
    }

    func stop() { process.stop() }
}
