import Foundation

/// Finds S3 credentials and the region the way the AWS CLI and SDKs do, from what a user already configured:
///
/// 1. the environment: `AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY`, `AWS_SESSION_TOKEN` (or the older
///    `AWS_SECURITY_TOKEN`);
/// 2. the shared credentials file (`AWS_SHARED_CREDENTIALS_FILE`, else `~/.aws/credentials`), section `[PROFILE]`;
/// 3. the shared config file (`AWS_CONFIG_FILE`, else `~/.aws/config`), section `[profile PROFILE]` (or
///    `[default]`).
///
/// The profile is the one given, else `AWS_PROFILE`, else `default`. The region is `AWS_REGION`, else
/// `AWS_DEFAULT_REGION`, else the profile's `region` in the config file. Errors name files and profiles, never a
/// value read from them.
public struct S3CredentialChain: Sendable {
    /// The environment to read (normally the process's).
    public var environment: [String: String]
    /// The profile asked for explicitly (overrides `AWS_PROFILE`).
    public var profile: String?

    /// A chain over `environment` (nil: the process environment).
    public init(environment: [String: String]? = nil, profile: String? = nil) {
        self.environment = environment ?? ProcessInfo.processInfo.environment
        self.profile = profile
    }

    /// The profile in use.
    public var profileName: String { profile ?? nonEmpty("AWS_PROFILE") ?? "default" }

    /// The first credentials found; `.credentialsUnavailable` when none are configured or a source is malformed.
    public func credentials() throws(TransportError) -> S3Credentials {
        let keyID = nonEmpty("AWS_ACCESS_KEY_ID")
        let secret = nonEmpty("AWS_SECRET_ACCESS_KEY")
        if profile == nil, keyID != nil || secret != nil {
            guard let keyID, let secret else {
                throw TransportError(
                    .credentialsUnavailable,
                    "only one of AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY is set in the environment")
            }
            return try S3Credentials(
                accessKeyID: keyID, secretAccessKey: secret,
                sessionToken: nonEmpty("AWS_SESSION_TOKEN") ?? nonEmpty("AWS_SECURITY_TOKEN"))
        }
        let name = profileName
        for (path, section) in [(credentialsFile, name), (configFile, name == "default" ? name : "profile \(name)")] {
            guard let path, let file = try Self.readINI(path) else { continue }
            guard let values = file[section] else { continue }
            let keyID = values["aws_access_key_id"]
            let secret = values["aws_secret_access_key"]
            if keyID == nil, secret == nil { continue }
            guard let keyID, let secret, !keyID.isEmpty, !secret.isEmpty else {
                throw TransportError(
                    .credentialsUnavailable,
                    "profile \(name) in \(path) has only one of aws_access_key_id and aws_secret_access_key")
            }
            return try S3Credentials(
                accessKeyID: keyID, secretAccessKey: secret, sessionToken: values["aws_session_token"])
        }
        throw TransportError(
            .credentialsUnavailable,
            "no S3 credentials: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or add profile \(name) to "
                + (credentialsFile ?? "~/.aws/credentials"))
    }

    /// The region, or nil when none is configured.
    public func region() throws(TransportError) -> String? {
        if let region = nonEmpty("AWS_REGION") ?? nonEmpty("AWS_DEFAULT_REGION") { return region }
        let name = profileName
        guard let path = configFile, let file = try Self.readINI(path) else { return nil }
        return file[name == "default" ? name : "profile \(name)"]?["region"]
    }

    var credentialsFile: String? {
        nonEmpty("AWS_SHARED_CREDENTIALS_FILE") ?? nonEmpty("HOME").map { $0 + "/.aws/credentials" }
    }

    var configFile: String? { nonEmpty("AWS_CONFIG_FILE") ?? nonEmpty("HOME").map { $0 + "/.aws/config" } }

    private func nonEmpty(_ name: String) -> String? {
        guard let value = environment[name], !value.isEmpty else { return nil }
        return value
    }

    /// Reads an INI file; nil when it does not exist. Larger than 1 MiB, unreadable or not UTF-8: an error.
    static func readINI(_ path: String) throws(TransportError) -> [String: [String: String]]? {
        guard FileManager.default.fileExists(atPath: path) else { return nil }
        guard let data = FileManager.default.contents(atPath: path) else {
            throw TransportError(.credentialsUnavailable, "cannot read \(path)")
        }
        guard data.count <= 1 << 20, let text = String(data: data, encoding: .utf8) else {
            throw TransportError(.credentialsUnavailable, "\(path) is larger than 1 MiB or not UTF-8 text")
        }
        return parseINI(text)
    }

    /// The AWS shared-file dialect: `[section]` headers, `key = value` lines, `#` and `;` comment lines; indented
    /// lines under a key with an empty value are a nested block (`s3 =` settings) and are skipped.
    static func parseINI(_ text: String) -> [String: [String: String]] {
        var sections: [String: [String: String]] = [:]
        var current: String?
        for rawLine in text.split(omittingEmptySubsequences: false, whereSeparator: { $0 == "\n" || $0 == "\r\n" }) {
            let indented = rawLine.first == " " || rawLine.first == "\t"
            let line = rawLine.trimmingCharacters(in: .whitespaces)
            if line.isEmpty || line.hasPrefix("#") || line.hasPrefix(";") { continue }
            if line.hasPrefix("["), line.hasSuffix("]") {
                let name = line.dropFirst().dropLast().trimmingCharacters(in: .whitespaces)
                let words = name.split(separator: " ", omittingEmptySubsequences: true)
                current = words.joined(separator: " ")
                if let current, sections[current] == nil { sections[current] = [:] }
                continue
            }
            guard let section = current, !indented, let equals = line.firstIndex(of: "=") else { continue }
            let key = line[..<equals].trimmingCharacters(in: .whitespaces).lowercased()
            let value = line[line.index(after: equals)...].trimmingCharacters(in: .whitespaces)
            sections[section, default: [:]][key] = value
        }
        return sections
    }
}
