import AetherReceiver
import AetherTransport
import Foundation

/// `aether serve --blobs s3://BUCKET/PREFIX [--endpoint URL] [--region R]`: the S3 blob store of fleet mode.
enum ServeBlobs {
    /// The store `--blobs` names, nil without it. Credentials and region come from the environment and profiles
    /// as the S3 backend reads them; a custom endpoint is addressed path-style, AWS virtual-host style.
    /// `minimumChunkSize` replaces the store's own chunk floor (`S3BlobStore.Options.minimumChunkSize`).
    static func store(_ parsed: Arguments, minimumChunkSize: Int? = nil) throws -> S3BlobStore? {
        guard let url = parsed.option("blobs") else {
            if parsed.option("endpoint") != nil || parsed.option("region") != nil {
                throw Arguments.UsageError(description: "--endpoint and --region go with --blobs")
            }
            return nil
        }
        guard url.hasPrefix("s3://") else {
            throw Arguments.UsageError(description: "--blobs takes an s3://BUCKET/PREFIX URL")
        }
        // The command line decodes its arguments as UTF-8 with U+FFFD for bytes that are not; S3 keys are UTF-8, so
        // such a prefix would silently name other keys than the ones typed.
        guard !url.unicodeScalars.contains("\u{FFFD}") else {
            throw Arguments.UsageError(description: "--blobs: the bucket and prefix must be UTF-8 (S3 keys are)")
        }
        let rest = url.dropFirst("s3://".count)
        let bucket = String(rest.prefix { $0 != "/" })
        let prefix = String(rest.dropFirst(bucket.count).drop { $0 == "/" })
        do {
            _ = try S3Destination(bucket: bucket, key: prefix.isEmpty ? "probe" : prefix + "/probe")
        } catch {
            throw Arguments.UsageError(description: "--blobs: \(error.message)")
        }
        let chain = S3CredentialChain()
        let region = try parsed.option("region") ?? chain.region() ?? "us-east-1"
        let endpoint: S3Endpoint
        if let custom = parsed.option("endpoint") {
            do {
                endpoint = try S3Endpoint(url: custom, region: region)
            } catch {
                throw Arguments.UsageError(description: "--endpoint: \(error.message)")
            }
        } else {
            endpoint = S3Endpoint.aws(region: region)
        }
        let client = try S3ObjectClient(
            bucket: bucket, endpoint: endpoint, credentials: chain.credentials(), client: HTTPClient.shared())
        return S3BlobStore(
            client: client, prefix: prefix, options: S3BlobStore.Options(minimumChunkSize: minimumChunkSize))
    }

    /// Runs `body` on a thread of its own and awaits it, so that blocking calls stay off the cooperative pool.
    static func onThread<T: Sendable>(_ body: @escaping @Sendable () throws(ReceiverError) -> T)
        async throws(ReceiverError)
        -> T
    {
        let result: Result<T, ReceiverError> = await withCheckedContinuation { continuation in
            let thread = Thread {
                do throws(ReceiverError) {
                    continuation.resume(returning: .success(try body()))
                } catch {
                    continuation.resume(returning: .failure(error))
                }
            }
            thread.stackSize = 8 << 20
            thread.start()
        }
        return try result.get()
    }
}
