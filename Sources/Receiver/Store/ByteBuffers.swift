/// Typed-throws bridges over `Array.withUnsafeBytes` (which only rethrows untyped errors).
enum ByteBuffers {
    /// Runs `body` over the bytes of `bytes`.
    static func withRaw<R>(_ bytes: [UInt8], _ body: (UnsafeRawBufferPointer) throws(ReceiverError) -> R)
        throws(ReceiverError) -> R
    {
        let result: Result<R, ReceiverError> = unsafe bytes.withUnsafeBytes { raw in
            do throws(ReceiverError) {
                return .success(try unsafe body(raw))
            } catch {
                return .failure(error)
            }
        }
        return try result.get()
    }

    /// Runs `body` over the mutable bytes of `bytes`.
    static func withMutableRaw<R>(
        _ bytes: inout [UInt8], _ body: (UnsafeMutableRawBufferPointer) throws(ReceiverError) -> R
    ) throws(ReceiverError) -> R {
        let result: Result<R, ReceiverError> = unsafe bytes.withUnsafeMutableBytes { raw in
            do throws(ReceiverError) {
                return .success(try unsafe body(raw))
            } catch {
                return .failure(error)
            }
        }
        return try result.get()
    }
}
