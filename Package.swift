// swift-tools-version: 6.1
import PackageDescription

/// One system-library module per C library (pkg-config name + the Debian package that provides it).
func systemLibrary(_ name: String, pkgConfig: String, apt: String) -> Target {
    .systemLibrary(name: name, pkgConfig: pkgConfig, providers: [.apt([apt])])
}

/// The toolchain links with -export-dynamic, which puts all ~23,000 of kioskcam's own
/// symbols in the dynamic symbol table: 2 MiB that the dynamic linker reads while it
/// binds the ~160 libraries FFmpeg pulls in (resident in every process, 1.8 MiB of a
/// broadcast's peak RSS, scripts/bench-broadcast). Nothing looks kioskcam's symbols
/// up at run time (no dlsym; backtraces read the symbol table). Release builds only,
/// so the tests link as they always did.
let releaseLinkerSettings: [LinkerSetting] = [
    .unsafeFlags(["-Xlinker", "--no-export-dynamic"], .when(platforms: [.linux], configuration: .release)),
]

/// kioskcam-broadcast also links with lld and packed relative relocations (DT_RELR, glibc
/// 2.36 as on bookworm): its 2 MiB of RELA entries, which the loader reads page by page at
/// every start, become 18 KiB. 2.2 MiB less peak RSS under the 50 MB cap (scripts/bench-broadcast).
let broadcastLinkerSettings: [LinkerSetting] = releaseLinkerSettings + [
    .unsafeFlags(["-use-ld=lld", "-Xlinker", "-z", "-Xlinker", "pack-relative-relocs"],
                 .when(platforms: [.linux], configuration: .release)),
]

let package = Package(
    name: "kioskcam",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "kioskcam", targets: ["kioskcam"]),
        /// The screen broadcast alone, for its 50 MB cap. Both programs ship built against
        /// the small static FFmpeg of scripts/build-release.
        .executable(name: "kioskcam-broadcast", targets: ["kioskcam-broadcast"]),
        /// The camera helper, the one program that links libcamera (its LTTng, libdw, GnuTLS …):
        /// kioskcam starts it for a libcamera camera and to list libcamera's cameras.
        .executable(name: "kioskcam-camera", targets: ["kioskcam-camera"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.6.0"),
        .package(url: "https://github.com/apple/swift-system", from: "1.4.0"),
        .package(url: "https://github.com/apple/swift-crypto", from: "3.12.0"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.6.0"),
        // The web app's server (HTTPS on SwiftNIO), its live WebSocket, and the self-signed
        // certificate. Traits off: no swift-configuration for a server configured by our TOML.
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.0", traits: []),
        .package(url: "https://github.com/hummingbird-project/hummingbird-websocket", from: "2.8.0"),
        .package(url: "https://github.com/apple/swift-certificates", from: "1.21.0"),
    ],
    targets: [
        // FFmpeg: the libraries come from pkg-config alone (no `link` in the module maps), so
        // PKG_CONFIG_PATH can point the shipped builds at scripts/build-release's.
        systemLibrary("CAVUtil", pkgConfig: "libavutil", apt: "libavutil-dev"),
        systemLibrary("CAVCodec", pkgConfig: "libavcodec", apt: "libavcodec-dev"),
        systemLibrary("CAVFormat", pkgConfig: "libavformat", apt: "libavformat-dev"),
        systemLibrary("CSwScale", pkgConfig: "libswscale", apt: "libswscale-dev"),
        systemLibrary("CV4L2", pkgConfig: "libv4l2", apt: "libv4l-dev"),
        systemLibrary("CALSA", pkgConfig: "alsa", apt: "libasound2-dev"),
        systemLibrary("CGPIOD", pkgConfig: "libgpiod", apt: "libgpiod-dev"),
        systemLibrary("CEvdev", pkgConfig: "libevdev", apt: "libevdev-dev"),
        systemLibrary("CCairo", pkgConfig: "cairo", apt: "libcairo2-dev"),
        systemLibrary("CSystemd", pkgConfig: "libsystemd", apt: "libsystemd-dev"),
        systemLibrary("CMosquitto", pkgConfig: "libmosquitto", apt: "libmosquitto-dev"),
        // libcurl opened on first use (dlopen), not linked: Sources/CCurl/include/CCurl.h says why.
        .target(name: "CCurl", linkerSettings: [.linkedLibrary("dl")]),
        systemLibrary("CLibXML2", pkgConfig: "libxml-2.0", apt: "libxml2-dev"),
        /// libcamera (C++ only): its flags and libraries for `CLibcamera`, and its version macros.
        systemLibrary("CLibcameraSystem", pkgConfig: "libcamera", apt: "libcamera-dev"),
        /// A small C API over libcamera's C++ (include/CLibcamera.h), which Swift imports.
        .target(name: "CLibcamera", dependencies: ["CLibcameraSystem"]),
        /// Kernel UAPI headers (linux/fb.h) for the framebuffer ioctls; no library to link.
        .systemLibrary(name: "CLinuxFB"),
        /// sys/eventfd.h, which Glibc's Swift module leaves out: `WakeUpEvent`'s kernel object.
        .systemLibrary(name: "CLinuxEventFD"),

        /// Pure policy, imports no C; most tests live here; and the thread primitives
        /// (`Locked`, `ThreadGroup`, `RepeatingThread`).
        .target(name: "KioskCore"),
        /// `WakeUpEvent`: the one way to wake a thread asleep in poll() (an eventfd).
        .target(
            name: "KioskWakeUp",
            dependencies: ["CLinuxEventFD", .product(name: "SystemPackage", package: "swift-system")]
        ),
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
            dependencies: ["KioskCore", "KioskWakeUp", "KioskMedia", "CV4L2", .product(name: "SystemPackage", package: "swift-system")]
        ),
        /// Thin Swift over libcamera (through CLibcamera): Raspberry Pi camera modules and
        /// other cameras whose ISP lives in libcamera, as a `VideoSource`, in this process
        /// or in a camera helper process (KioskSources' CameraHelper).
        .target(
            name: "KioskLibcamera",
            dependencies: ["KioskCore", "KioskWakeUp", "KioskV4L2", "KioskSources", "CLibcamera",
                           .product(name: "SystemPackage", package: "swift-system")]
        ),
        /// Thin Swift over alsa-lib: capture with xrun recovery, device listing.
        .target(name: "KioskALSA", dependencies: ["KioskCore", "KioskWakeUp", "CALSA"]),
        /// Thin Swift over libgpiod 1.6 (v1 API): buttons with edge events, the status LED.
        .target(
            name: "KioskGPIO",
            dependencies: ["KioskCore", "CGPIOD", .product(name: "SystemPackage", package: "swift-system")]
        ),
        /// Thin Swift over libevdev: touch screens (protocols A, B, single touch), uinput.
        .target(
            name: "KioskInput",
            dependencies: ["KioskCore", "CEvdev", .product(name: "SystemPackage", package: "swift-system")]
        ),
        /// The framebuffer (fbdev mmap, or memory/file backed), its pixel layouts, and the
        /// screen as a video source. No cairo, so that kioskcam-broadcast reads the screen alone.
        .target(
            name: "KioskFramebuffer",
            dependencies: ["KioskCore", "KioskMedia", "CLinuxFB", "CAVUtil", "CSwScale",
                           .product(name: "SystemPackage", package: "swift-system")]
        ),
        /// The screen: cairo drawing on the framebuffer (re-exported).
        .target(
            name: "KioskScreen",
            dependencies: ["KioskCore", "KioskMedia", "KioskFramebuffer", "CCairo",
                           .product(name: "SystemPackage", package: "swift-system")]
        ),
        /// Secrets in the state directory: the PIN and the web users' passwords (salted
        /// PBKDF2-SHA256 hashes) and the PIN's throttling state.
        .target(
            name: "KioskPIN",
            dependencies: ["KioskCore", .product(name: "_CryptoExtras", package: "swift-crypto"),
                           .product(name: "Crypto", package: "swift-crypto")]
        ),
        /// The web app: HTTPS (Hummingbird on SwiftNIO) in front of the control protocol,
        /// the library's files with Range, the live view over a WebSocket, the pages.
        .target(
            name: "KioskWeb",
            dependencies: [
                "KioskCore", "KioskPIN", "KioskControl", "KioskRecording", "KioskMedia", "KioskSOAP",
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "HummingbirdTLS", package: "hummingbird"),
                .product(name: "HummingbirdWebSocket", package: "hummingbird-websocket"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        /// SOAP read with libxml2 into KioskCore's `SOAPElement`:
        /// ONVIF and WS-Discovery messages. Apart so that only the web app links libxml2.
        .target(name: "KioskSOAP", dependencies: ["KioskCore", "CLibXML2"]),
        /// The control socket: newline-delimited JSON over a Unix socket, server and client.
        .target(
            name: "KioskControl",
            dependencies: ["KioskCore", "KioskWakeUp", .product(name: "Logging", package: "swift-log"),
                           .product(name: "SystemPackage", package: "swift-system")]
        ),
        /// Thin Swift over libmosquitto: one client driven by its owner's poll loop.
        .target(name: "KioskMQTT", dependencies: ["CMosquitto"]),
        /// Offsite copies: thin Swift over libcurl (S3 PUT with AWS Signature V4), the
        /// persistent upload queue and its worker thread.
        .target(
            name: "KioskUpload",
            dependencies: ["KioskCore", "KioskRecording", "CCurl", .product(name: "Crypto", package: "swift-crypto"),
                           .product(name: "Logging", package: "swift-log")]
        ),
        /// The recording pipeline: encoder thread, segments, temp files, salvage.
        .target(
            name: "KioskRecording",
            dependencies: [
                "KioskCore", "KioskMedia",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "SystemPackage", package: "swift-system"),
            ]
        ),
        /// The microphone the configuration names: ALSA, the tone, silence, a WAV file.
        .target(
            name: "KioskMicrophones",
            dependencies: ["KioskCore", "KioskSources", "KioskALSA", .product(name: "Logging", package: "swift-log")]
        ),
        /// What both programs' command lines share: common options, errors as one line and
        /// an exit status, the log format, the version.
        .target(
            name: "KioskCLI",
            dependencies: ["KioskCore", "KioskRecording", .product(name: "ArgumentParser", package: "swift-argument-parser"),
                           .product(name: "Logging", package: "swift-log")]
        ),
        /// The broadcast: the screen (or a camera it is handed) and the microphone, one encode,
        /// to the library and live destinations under the memory plan; the capped cgroup.
        .target(
            name: "KioskBroadcast",
            dependencies: [
                "KioskCore", "KioskMedia", "KioskRecording", "KioskSources", "KioskFramebuffer", "KioskMicrophones", "KioskControl", "KioskCLI",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "SystemPackage", package: "swift-system"),
            ]
        ),
        /// The appliance: every part as a service (swift-service-lifecycle), one daemon.
        .target(
            name: "KioskAppliance",
            dependencies: [
                "KioskCore", "KioskWakeUp", "KioskMedia", "KioskSources", "KioskRecording", "KioskV4L2",
                "KioskALSA", "KioskGPIO", "KioskInput", "KioskScreen", "KioskPIN", "KioskControl", "KioskMQTT", "KioskUpload", "CSystemd",
                "KioskMicrophones", "KioskBroadcast", "KioskWeb",
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "SystemPackage", package: "swift-system"),
            ]
        ),
        .executableTarget(
            name: "kioskcam",
            dependencies: [
                "KioskCore", "KioskMedia", "KioskSources", "KioskRecording", "KioskV4L2", "KioskALSA", "KioskWakeUp",
                "KioskGPIO", "KioskInput", "KioskScreen", "KioskPIN", "KioskControl", "KioskAppliance", "KioskUpload",
                "KioskCLI", "KioskBroadcast", "KioskMicrophones",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ],
            linkerSettings: broadcastLinkerSettings
        ),
        .executableTarget(
            name: "kioskcam-broadcast",
            dependencies: ["KioskBroadcast", "KioskCLI", .product(name: "ArgumentParser", package: "swift-argument-parser")],
            linkerSettings: broadcastLinkerSettings
        ),
        .executableTarget(
            name: "kioskcam-camera",
            dependencies: ["KioskCore", "KioskSources", "KioskLibcamera", .product(name: "ArgumentParser", package: "swift-argument-parser")],
            linkerSettings: broadcastLinkerSettings
        ),

        /// Fuzz targets, one per parser of outside data (docs/testing.md, "Fuzzing"). Built by
        /// scripts/fuzz (-DFUZZING, -sanitize=fuzzer,address) each is a libFuzzer entry
        /// point; a plain build makes each a runner that replays its corpus once.
        .systemLibrary(name: "CLibFuzzer", path: "Fuzz/CLibFuzzer"),
        .target(name: "FuzzSupport", dependencies: ["CLibFuzzer"], path: "Fuzz/Support"),
        .executableTarget(name: "FuzzTOML", dependencies: ["KioskCore", "FuzzSupport"], path: "Fuzz/FuzzTOML"),
        .executableTarget(name: "FuzzControlRequest", dependencies: ["KioskCore", "FuzzSupport"], path: "Fuzz/FuzzControlRequest"),
        .executableTarget(name: "FuzzTouchDecoder", dependencies: ["KioskCore", "FuzzSupport"], path: "Fuzz/FuzzTouchDecoder"),
        .executableTarget(name: "FuzzWebRequest", dependencies: ["KioskCore", "FuzzSupport"], path: "Fuzz/FuzzWebRequest"),
        .executableTarget(name: "FuzzRTSP", dependencies: ["KioskCore", "FuzzSupport"], path: "Fuzz/FuzzRTSP"),
        .executableTarget(name: "FuzzONVIF", dependencies: ["KioskCore", "KioskSOAP", "FuzzSupport"], path: "Fuzz/FuzzONVIF"),
        .executableTarget(name: "FuzzCgroup", dependencies: ["KioskCore", "FuzzSupport"], path: "Fuzz/FuzzCgroup"),
        .executableTarget(name: "FuzzCameraHelper", dependencies: ["KioskSources", "FuzzSupport"], path: "Fuzz/FuzzCameraHelper"),
        .executableTarget(name: "FuzzLibraryIndex", dependencies: ["KioskCore", "KioskRecording", "FuzzSupport"],
                          path: "Fuzz/FuzzLibraryIndex"),
        .executableTarget(
            name: "FuzzSalvage",
            dependencies: ["KioskCore", "KioskMedia", "KioskRecording", "CAVUtil", "FuzzSupport", .product(name: "Logging", package: "swift-log")],
            path: "Fuzz/FuzzSalvage"
        ),

        /// ffprobe, temp folders and the built binary, shared by the test targets.
        .target(name: "KioskTestSupport", path: "Tests/KioskTestSupport"),
        .testTarget(name: "KioskCoreTests", dependencies: ["KioskCore", "KioskWakeUp", "KioskSOAP"]),
        .testTarget(name: "KioskV4L2Tests", dependencies: ["KioskV4L2", "KioskMedia", "KioskCore", "KioskTestSupport"]),
        .testTarget(name: "KioskLibcameraTests", dependencies: ["KioskLibcamera", "CLibcamera", "KioskCore", "KioskSources", "KioskTestSupport"]),
        .testTarget(name: "KioskALSATests", dependencies: ["KioskALSA", "KioskCore"]),
        .testTarget(name: "KioskMediaTests", dependencies: ["KioskMedia", "KioskCore", "KioskTestSupport"]),
        .testTarget(
            name: "KioskRecordingTests",
            dependencies: ["KioskRecording", "KioskSources", "KioskMedia", "KioskCore", "KioskTestSupport",
                           .product(name: "Logging", package: "swift-log")]
        ),
        .testTarget(name: "KioskGPIOTests", dependencies: ["KioskGPIO", "KioskCore", "KioskTestSupport"]),
        .testTarget(name: "KioskInputTests", dependencies: ["KioskInput", "KioskCore", "KioskTestSupport"]),
        /// Golden PNGs are read from the source tree (#filePath), not bundled.
        .testTarget(name: "KioskScreenTests", dependencies: ["KioskScreen", "KioskFramebuffer", "KioskMedia", "KioskCore", "KioskTestSupport"],
                    exclude: ["Golden"]),
        .testTarget(name: "KioskPINTests", dependencies: ["KioskPIN", "KioskCore", "KioskTestSupport"]),
        /// Against a real S3 server: moto (scripts/install-deps --test), started by the tests,
        /// and Servers/sigv4_server.py, which checks every signature by AWS's documented steps.
        .testTarget(
            name: "KioskUploadTests",
            dependencies: ["KioskUpload", "KioskCore", "KioskRecording", "KioskTestSupport", .product(name: "Crypto", package: "swift-crypto"),
                           .product(name: "Logging", package: "swift-log")],
            exclude: ["Servers"]
        ),
        .testTarget(name: "KioskControlTests", dependencies: ["KioskControl", "KioskCore", "KioskTestSupport"]),
        .testTarget(
            name: "KioskApplianceTests",
            dependencies: ["KioskAppliance", "KioskCore", "KioskInput", "KioskControl", "KioskSources", "KioskScreen", "KioskALSA",
                           "KioskTestSupport",
                           .product(name: "Logging", package: "swift-log")]
        ),
        /// End-to-end: runs the built `kioskcam` binary (swift test builds it first).
        .testTarget(name: "kioskcamTests", dependencies: ["KioskCore", "KioskRecording", "KioskTestSupport", "kioskcam"]),
    ],
    swiftLanguageModes: [.v6],
    // libcamera's headers need C++17.
    cxxLanguageStandard: .cxx17
)
