/// Which region kernel a Reed-Solomon encoder or decoder uses. Both give identical bytes.
public enum ReedSolomonKernel: Sendable, Hashable {
    /// The fastest kernel this CPU supports: AVX2 split-nibble PSHUFB for GF(2^8) where the CPU has AVX2,
    /// the portable kernel otherwise.
    case automatic
    /// Plain table lookups in Swift, on every CPU (the reference the SIMD kernel is tested against).
    case portable

    /// Whether this CPU can run the SIMD kernel.
    public static var simdAvailable: Bool { GFKernels.hasAVX2 }
}
