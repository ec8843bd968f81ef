import AetherIO

#if canImport(Glibc)
    import Glibc
#endif

/// setns(2) into a network namespace for the calling thread only (the rest of the process stays where it is).
enum NetworkNamespace {
    private typealias SetNamespace = @convention(c) (Int32, Int32) -> Int32

    /// CLONE_NEWNET in <sched.h>.
    private static let network: Int32 = 0x4000_0000

    // glibc has setns, but the Glibc module does not export it; it is looked up once.
    private static let setns: SetNamespace? = {
        guard let handle = unsafe dlopen(nil, RTLD_NOW), let symbol = unsafe dlsym(handle, "setns") else {
            return nil
        }
        return unsafe unsafeBitCast(symbol, to: SetNamespace.self)
    }()

    /// Opens a namespace file (/run/netns/NAME, /proc/thread-self/ns/net).
    static func open(_ path: String) throws(LinkLabError) -> Int32 {
        do {
            return try Syscall.open(path, flags: O_RDONLY)
        } catch {
            throw LinkLabError(.systemCall, "open \(path): \(error.message)")
        }
    }

    /// Moves the calling thread into the network namespace `descriptor` refers to.
    static func enter(_ descriptor: Int32, name: String) throws(LinkLabError) {
        guard let setns = setns else {
            throw LinkLabError(.unavailable, "this C library has no setns")
        }
        guard setns(descriptor, network) == 0 else {
            throw LinkLabError(.systemCall, "setns into \(name): \(TunDevice.reason(errno))")
        }
    }
}
