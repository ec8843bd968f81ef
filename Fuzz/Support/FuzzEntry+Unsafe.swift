// Shared by every fuzz target: libFuzzer's entry point and the check that turns a broken property
// into a crash libFuzzer records. Each target defines `fuzzInput(_:)` in Fuzz/<name>/<Name>Fuzz.swift.

#if canImport(Glibc)
    import Glibc
#endif

/// libFuzzer calls this once per input. The bytes are passed on without a copy, so AddressSanitizer
/// sees a read past the end of the input.
@_cdecl("LLVMFuzzerTestOneInput")
public func llvmFuzzerTestOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    guard let data = unsafe data else {
        unsafe fuzzInput(UnsafeRawBufferPointer(start: nil, count: 0))
        return 0
    }
    unsafe fuzzInput(UnsafeRawBufferPointer(start: data, count: size))
    return 0
}

/// Property checks inside fuzz targets.
enum FuzzCheck {
    /// Crashes (so libFuzzer saves the input) when a property of the parser does not hold.
    static func require(_ condition: Bool, _ message: @autoclosure () -> String) {
        guard !condition else { return }
        fail(message())
    }

    /// Whether `FUZZ_TRACE` is set: targets then print what each input was accepted as, to check that a
    /// corpus holds valid encodings (`FUZZ_TRACE=1 .build-fuzz/fuzz/NAME -runs=0 Fuzz/NAME/corpus`).
    static let tracing = unsafe getenv("FUZZ_TRACE") != nil

    /// Prints `what` when tracing: a parser accepted the input.
    static func accepted(_ what: @autoclosure () -> String) {
        guard tracing else { return }
        print("fuzz accepted: \(what())")
    }

    /// Crashes (so libFuzzer saves the input): a property failed or the target cannot run.
    static func fail(_ message: String) -> Never {
        print("fuzz property failed: \(message)")
        // abort does not flush stdio; the message must reach the log first.
        fflush(nil)
        abort()
    }
}
