// swift-tools-version: 6.0
import PackageDescription

/// One system-library module per C library (pkg-config name + the Debian package that provides it).
func systemLibrary(_ name: String, pkgConfig: String, apt: String) -> Target {
    .systemLibrary(name: name, pkgConfig: pkgConfig, providers: [.apt([apt])])
}

let package = Package(
    name: "kioskcam",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "kioskcam", targets: ["kioskcam"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.6.0"),
        .package(url: "https://github.com/apple/swift-system", from: "1.4.0"),
    ],
    targets: [
        systemLibrary("CAVUtil", pkgConfig: "libavutil", apt: "libavutil-dev"),
        systemLibrary("CAVCodec", pkgConfig: "libavcodec", apt: "libavcodec-dev"),
        systemLibrary("CAVFormat", pkgConfig: "libavformat", apt: "libavformat-dev"),
        systemLibrary("CSwScale", pkgConfig: "libswscale", apt: "libswscale-dev"),
        systemLibrary("CV4L2", pkgConfig: "libv4l2", apt: "libv4l-dev"),
        systemLibrary("CALSA", pkgConfig: "alsa", apt: "libasound2-dev"),

        /// Pure policy: no C imports, most tests live here.
        .target(name: "KioskCore"),
        /// Thin Swift over FFmpeg: encoders, muxer, pixel conversion, JPEG, salvage.
        .target(
            name: "KioskMedia",
            dependencies: ["KioskCore", "CAVUtil", "CAVCodec", "CAVFormat", "CSwScale"]
        ),
        /// Capture sources that need no hardware: test pattern, tone, raw file.
        .target(
            name: "KioskSources",
            dependencies: ["KioskCore", .product(name: "SystemPackage", package: "swift-system")]
        ),
        /// Thin Swift over libv4l2: capabilities, formats, mmap streaming, controls.
        .target(
            name: "KioskV4L2",
            dependencies: ["KioskCore", "KioskMedia", "CV4L2", .product(name: "SystemPackage", package: "swift-system")]
        ),
        /// Thin Swift over alsa-lib: capture with xrun recovery, device listing.
        .target(name: "KioskALSA", dependencies: ["KioskCore", "CALSA"]),
        /// The recording pipeline: encoder thread, segments, temp files, salvage.
        .target(
            name: "KioskRecording",
            dependencies: [
                "KioskCore", "KioskMedia",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "SystemPackage", package: "swift-system"),
            ]
        ),
        .executableTarget(
            name: "kioskcam",
            dependencies: [
                "KioskCore", "KioskMedia", "KioskSources", "KioskRecording", "KioskV4L2", "KioskALSA",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),

        /// ffprobe, temp folders and the built binary, shared by the test targets.
        .target(name: "KioskTestSupport", path: "Tests/KioskTestSupport"),
        .testTarget(name: "KioskCoreTests", dependencies: ["KioskCore"]),
        .testTarget(name: "KioskV4L2Tests", dependencies: ["KioskV4L2", "KioskMedia", "KioskCore", "KioskTestSupport"]),
        .testTarget(name: "KioskALSATests", dependencies: ["KioskALSA", "KioskCore"]),
        .testTarget(name: "KioskMediaTests", dependencies: ["KioskMedia", "KioskCore", "KioskTestSupport"]),
        .testTarget(
            name: "KioskRecordingTests",
            dependencies: ["KioskRecording", "KioskSources", "KioskMedia", "KioskCore", "KioskTestSupport",
                           .product(name: "Logging", package: "swift-log")]
        ),
        /// End-to-end: runs the built `kioskcam` binary (swift test builds it first).
        .testTarget(name: "kioskcamTests", dependencies: ["KioskCore", "KioskTestSupport", "kioskcam"]),
    ],
    swiftLanguageModes: [.v6]
)
