/// Array pointer access with typed throws (the standard library's `withUnsafeBytes` rethrows `any Error`).
enum TypedBytes {
    /// Calls `body` with the bytes of `array`, carrying a typed error out.
    static func with<R, E: Error>(_ array: [UInt8], _ body: (UnsafeRawBufferPointer) throws(E) -> R) throws(E) -> R {
        let result: Result<R, E> = unsafe array.withUnsafeBytes { raw in
            do throws(E) { return .success(try unsafe body(raw)) } catch { return .failure(error) }
        }
        return try result.get()
    }
}
