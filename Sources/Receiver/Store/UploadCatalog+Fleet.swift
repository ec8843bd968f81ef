extension UploadCatalog {
    /// One process owns an embedded catalogue: the engine's per-upload gate already serializes, so `body` runs as
    /// it is.
    public func serialized<T>(_ id: UploadID, _ body: () throws(ReceiverError) -> T) throws(ReceiverError) -> T {
        try body()
    }

    /// One process owns an embedded catalogue: every job runs.
    public func exclusively(_ job: String, _ body: () throws(ReceiverError) -> Void) throws(ReceiverError) -> Bool {
        try body()
        return true
    }
}
