/// How a libpq failure becomes a `ReceiverError`: a server that cannot be reached, went away, timed out a statement
/// or lost a lock race is `.unavailable` (503: the request may be retried; nothing acknowledged was lost); anything
/// else is `.storageFailed`. Messages carry the server's first line and SQLSTATE, never a bound value or password.
enum PostgresFailure {
    /// A failed `PQconnectdb`.
    static func connect(_ message: String, redacting password: String?) -> ReceiverError {
        var text = message
        if let password, !password.isEmpty { text = text.replacingAll(password, with: "<redacted>") }
        let lowered = text.lowercased()
        if lowered.contains("authentication failed") || lowered.contains("no password supplied")
            || lowered.contains("password authentication")
        {
            return ReceiverError(
                .unavailable,
                "the catalogue server refused the login (\(text)): check the user in --catalog and the password in "
                    + "the URL, PGPASSWORD or ~/.pgpass")
        }
        if lowered.contains("database") && lowered.contains("does not exist") {
            return ReceiverError(
                .unavailable, "the catalogue database is missing (\(text)): create it (createdb) or name another")
        }
        return ReceiverError(
            .unavailable,
            "the catalogue server is unreachable (\(text)): start PostgreSQL or check the host and port in --catalog")
    }

    /// A statement that failed with `sqlState` (nil when the server sent none).
    static func statement(sqlState: String?, message: String, connectionLost: Bool) -> ReceiverError {
        let state = sqlState ?? "none"
        if connectionLost || state.hasPrefix("08") || ["57P01", "57P02", "57P03"].contains(state) {
            return ReceiverError(
                .unavailable, "the catalogue server went away (\(message)); the request can be retried")
        }
        if state == "57014" {
            return ReceiverError(.unavailable, "a catalogue statement ran past statement_timeout; retry later")
        }
        if ["40001", "40P01", "55P03"].contains(state) {
            return ReceiverError(.unavailable, "the catalogue lost a lock race (SQLSTATE \(state)); retry")
        }
        return ReceiverError(.storageFailed, "a catalogue statement failed (SQLSTATE \(state)): \(message)")
    }
}

extension String {
    fileprivate func replacingAll(_ target: String, with replacement: String) -> String {
        guard !target.isEmpty else { return self }
        var result = ""
        var rest = self[...]
        while let range = rest.firstRange(of: target) {
            result += rest[..<range.lowerBound] + replacement
            rest = rest[range.upperBound...]
        }
        return result + rest
    }
}
