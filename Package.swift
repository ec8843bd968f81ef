// swift-tools-version:6.2
// Aether: resumable, verified, adaptive large-file upload for Linux.
// Layers (see docs/ARCHITECTURE in the README): a module imports only modules of a lower layer and C wrappers.

import PackageDescription

let swiftSettings: [SwiftSetting] = [
    .swiftLanguageMode(.v6),
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("MemberImportVisibility"),
    .enableUpcomingFeature("InternalImportsByDefault"),
    .strictMemorySafety(),
    // Zero warnings, without unsafeFlags: a package that depends on Aether can still resolve it by version.
    .treatAllWarnings(as: .error),
]

// -Wall -Wextra -Werror through the safe settings. The optimisation level follows the build configuration
// (SwiftPM builds C at -O0 in debug and optimised in release; aether-bench refuses debug builds).
let cSettings: [CSetting] = [
    .enableWarning("all"), .enableWarning("extra"), .treatAllWarnings(as: .error),
]

let package = Package(
    name: "Aether",
    products: [
        .library(name: "AetherIO", targets: ["AetherIO"]),
        .library(name: "AetherIntegrity", targets: ["AetherIntegrity"]),
        .library(name: "AetherCoding", targets: ["AetherCoding"]),
        .library(name: "AetherScheduling", targets: ["AetherScheduling"]),
        .library(name: "AetherSecurity", targets: ["AetherSecurity"]),
        .library(name: "AetherTransport", targets: ["AetherTransport"]),
        .library(name: "AetherUploader", targets: ["AetherUploader"]),
        .library(name: "AetherReceiver", targets: ["AetherReceiver"]),
        .executable(name: "aether", targets: ["aether"]),
        .executable(name: "aether-bench", targets: ["aether-bench"]),
    ],
    targets: [
        // MARK: C wrappers of Debian libraries
        .systemLibrary(
            name: "CAetherOpenSSL", path: "Sources/C/CAetherOpenSSL", pkgConfig: "openssl",
            providers: [.apt(["libssl-dev"])]),
        .systemLibrary(
            name: "CAetherSodium", path: "Sources/C/CAetherSodium", pkgConfig: "libsodium",
            providers: [.apt(["libsodium-dev"])]),
        .systemLibrary(
            name: "CAetherZlib", path: "Sources/C/CAetherZlib", pkgConfig: "zlib",
            providers: [.apt(["zlib1g-dev"])]),
        .systemLibrary(
            name: "CAetherCurl", path: "Sources/C/CAetherCurl", pkgConfig: "libcurl",
            providers: [.apt(["libcurl4-openssl-dev"])]),
        .systemLibrary(
            name: "CAetherZstd", path: "Sources/C/CAetherZstd", pkgConfig: "libzstd",
            providers: [.apt(["libzstd-dev"])]),
        .systemLibrary(
            name: "CAetherSQLite", path: "Sources/C/CAetherSQLite", pkgConfig: "sqlite3",
            providers: [.apt(["libsqlite3-dev"])]),
        .systemLibrary(
            name: "CAetherPQ", path: "Sources/C/CAetherPQ", pkgConfig: "libpq", providers: [.apt(["libpq-dev"])]),
        .systemLibrary(
            name: "CAetherMicroHTTPD", path: "Sources/C/CAetherMicroHTTPD", pkgConfig: "libmicrohttpd",
            providers: [.apt(["libmicrohttpd-dev"])]),
        .systemLibrary(
            name: "CAetherISAL", path: "Sources/C/CAetherISAL", pkgConfig: "libisal",
            providers: [.apt(["libisal-dev"])]),
        // liburing's header redefines feature macros; it is only ever included from uring.c.
        .target(
            name: "CAetherURing", path: "Sources/C/CAetherURing", cSettings: cSettings,
            linkerSettings: [.linkedLibrary("uring")]),
        // Hand-written SIMD kernels (CRC32C, GF(2^8) multiply) that must beat the Swift versions in aether-bench.
        .target(name: "CAetherKernels", path: "Sources/C/CAetherKernels", cSettings: cSettings),

        // MARK: Layers
        .target(
            name: "AetherIO",
            dependencies: ["CAetherOpenSSL", "CAetherSodium", "CAetherURing", "CAetherKernels", "CAetherZlib"],
            path: "Sources/IO", swiftSettings: swiftSettings),
        .target(
            name: "AetherIntegrity", dependencies: ["AetherIO"],
            path: "Sources/Integrity", swiftSettings: swiftSettings),
        .target(
            name: "AetherCoding", dependencies: ["AetherIO", "CAetherKernels"],
            path: "Sources/Coding", swiftSettings: swiftSettings),
        .target(
            name: "AetherScheduling", dependencies: ["AetherIO"],
            path: "Sources/Scheduling", swiftSettings: swiftSettings),
        .target(
            name: "AetherSecurity", dependencies: ["AetherIO", "AetherIntegrity", "CAetherOpenSSL", "CAetherSodium"],
            path: "Sources/Security", swiftSettings: swiftSettings),
        .target(
            name: "AetherTransport",
            dependencies: [
                "AetherIO", "AetherIntegrity", "AetherSecurity", "CAetherCurl", "CAetherZlib", "CAetherZstd",
            ],
            path: "Sources/Transport", swiftSettings: swiftSettings),
        .target(
            name: "AetherUploader",
            dependencies: [
                "AetherIO", "AetherIntegrity", "AetherCoding", "AetherScheduling", "AetherSecurity", "AetherTransport",
            ],
            path: "Sources/Uploader", swiftSettings: swiftSettings),
        // The receiver: beside the Uploader, on top of layers 1-6 (never imports AetherUploader).
        .target(
            name: "AetherReceiver",
            dependencies: [
                "AetherIO", "AetherIntegrity", "AetherCoding", "AetherSecurity", "AetherTransport", "CAetherSQLite",
                "CAetherMicroHTTPD", "CAetherPQ",
            ],
            path: "Sources/Receiver", swiftSettings: swiftSettings),
        // Test support (no layer, never a dependency of one, not a product): local nginx and PostgreSQL for the bench
        // and the interop tests, the manual clock of the unit tests.
        .target(
            name: "AetherTestSupport", dependencies: ["AetherIO"], path: "Sources/TestSupport",
            swiftSettings: swiftSettings),
        // Test support (no layer, never a dependency of one): the link lab, a TUN delay line between two network
        // namespaces for the bench and the slow process tests.
        .target(
            name: "AetherLinkLab", dependencies: ["AetherIO"], path: "Sources/LinkLab", swiftSettings: swiftSettings),

        // MARK: Executables
        .executableTarget(
            name: "aether",
            dependencies: [
                "AetherIO", "AetherIntegrity", "AetherCoding", "AetherScheduling", "AetherSecurity", "AetherTransport",
                "AetherUploader", "AetherReceiver",
            ],
            path: "Sources/CLI", swiftSettings: swiftSettings),
        .executableTarget(
            name: "aether-bench",
            dependencies: [
                "AetherIO", "AetherIntegrity", "AetherCoding", "AetherScheduling", "AetherSecurity", "AetherTransport",
                "CAetherOpenSSL", "CAetherSodium", "CAetherISAL", "CAetherKernels",
                "AetherReceiver",
                "AetherUploader",
                "AetherTestSupport",
                "AetherLinkLab",
            ],
            path: "Sources/Bench", swiftSettings: swiftSettings),

        // MARK: Tests
        .testTarget(
            name: "AetherIOTests", dependencies: ["AetherTestSupport", "AetherIO", "CAetherURing"],
            path: "Tests/IOTests",
            swiftSettings: swiftSettings),
        .testTarget(
            name: "AetherIntegrityTests", dependencies: ["AetherTestSupport", "AetherIO", "AetherIntegrity"],
            path: "Tests/IntegrityTests",
            swiftSettings: swiftSettings),
        .testTarget(
            name: "AetherCodingTests", dependencies: ["AetherIO", "AetherCoding"], path: "Tests/CodingTests",
            swiftSettings: swiftSettings),
        .testTarget(
            name: "AetherSchedulingTests", dependencies: ["AetherTestSupport", "AetherIO", "AetherScheduling"],
            path: "Tests/SchedulingTests",
            swiftSettings: swiftSettings),
        .testTarget(
            name: "AetherSecurityTests",
            dependencies: ["AetherTestSupport", "AetherIO", "AetherIntegrity", "AetherSecurity"],
            path: "Tests/SecurityTests", swiftSettings: swiftSettings),
        .testTarget(
            name: "AetherTransportTests",
            dependencies: ["AetherTestSupport", "AetherIO", "AetherIntegrity", "AetherSecurity", "AetherTransport"],
            path: "Tests/TransportTests",
            swiftSettings: swiftSettings),
        .testTarget(
            name: "AetherReceiverTests",
            dependencies: [
                "AetherIO", "AetherIntegrity", "AetherCoding", "AetherSecurity", "AetherTransport", "AetherReceiver",
                "AetherTestSupport",
            ],
            path: "Tests/ReceiverTests", swiftSettings: swiftSettings),
        .testTarget(
            name: "AetherUploaderTests",
            dependencies: [
                "AetherTestSupport",
                "AetherIO", "AetherIntegrity", "AetherScheduling", "AetherSecurity", "AetherTransport",
                "AetherUploader",
                "AetherReceiver",
            ],
            path: "Tests/UploaderTests",
            swiftSettings: swiftSettings),
        // The README's library examples, compiled and run (scripts/check-readme-examples.py keeps them verbatim).
        .testTarget(
            name: "AetherReadmeExamplesTests",
            dependencies: [
                "AetherIO", "AetherIntegrity", "AetherCoding", "AetherScheduling", "AetherSecurity", "AetherTransport",
                "AetherUploader", "AetherReceiver",
            ],
            path: "Tests/ReadmeExamplesTests", swiftSettings: swiftSettings),
        .testTarget(
            name: "AetherLabTests", dependencies: ["AetherIO", "AetherLinkLab", "AetherScheduling"],
            path: "Tests/LabTests",
            swiftSettings: swiftSettings),
        .testTarget(
            name: "AetherBenchTests", dependencies: ["aether-bench"], path: "Tests/BenchTests",
            swiftSettings: swiftSettings),
        .testTarget(
            name: "AetherInteropTests",
            dependencies: [
                "AetherIO", "AetherIntegrity", "AetherCoding", "AetherSecurity", "AetherTransport", "AetherTestSupport",
            ],
            path: "Tests/Interop", exclude: ["peers", "requirements.txt"], swiftSettings: swiftSettings),
    ]
)
