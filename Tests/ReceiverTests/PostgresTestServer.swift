import AetherTestSupport

/// The tests' PostgreSQL server (AetherTestSupport' launcher, shared with the bench and the fleet suite).
typealias PostgresTestServer = PostgresProcess
/// Why the test server could not do what was asked.
typealias PostgresTestError = PostgresProcessError

extension PostgresProcess {
    /// The server every test shares, started on first use; a test that stops or restarts the server starts a
    /// private one.
    static let shared: Result<PostgresProcess, PostgresProcessError> = Result {
        () throws(PostgresProcessError) in try PostgresProcess()
    }

    /// A new database on the shared server.
    static func sharedDatabase() throws -> String {
        try shared.get().createDatabase()
    }
}
