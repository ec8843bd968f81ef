// The spec's offsets and sizes are 64-bit (files past 4 GiB, Int offsets into mmap windows).
#if _pointerBitWidth(_32)
    #error("Aether requires a 64-bit platform: file offsets and chunk indices are 64-bit.")
#endif

/// Facts about the platform Aether runs on.
public enum Platform {
    /// Pointer width in bits; a 32-bit build is refused at compile time.
    public static let pointerBitWidth = MemoryLayout<Int>.size * 8
}
