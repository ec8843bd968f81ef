/// The array forms of the AEADs (`ChaChaPoly`, `AESGCM`) over their zero-allocation buffer forms.
enum AEADArrays {
    /// Calls `body` with `input`, `aad` and a zeroed output of `outputCount` bytes, and returns the output.
    /// Array's pointer methods rethrow untyped errors, so the typed error is carried out as a value.
    static func transform(
        _ input: [UInt8], aad: [UInt8], outputCount: Int,
        _ body: (UnsafeRawBufferPointer, UnsafeRawBufferPointer, UnsafeMutableRawBufferPointer) throws(SecurityError)
            -> Void
    ) throws(SecurityError) -> [UInt8] {
        var output = [UInt8](repeating: 0, count: outputCount)
        let failure: SecurityError? = unsafe output.withUnsafeMutableBytes { out -> SecurityError? in
            unsafe input.withUnsafeBytes { i -> SecurityError? in
                unsafe aad.withUnsafeBytes { a -> SecurityError? in
                    do throws(SecurityError) {
                        try unsafe body(i, a, out)
                        return nil
                    } catch {
                        return error
                    }
                }
            }
        }
        if let failure { throw failure }
        return output
    }
}
