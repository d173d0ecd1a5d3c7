import Foundation
#if FUZZING
import CLibFuzzer
#endif

/// Shared by the fuzz targets: the property check that turns a logic error into a crash
/// libFuzzer records, a reader that turns fuzz bytes into typed values, and the replay
/// runner a plain build uses to run every saved input once.
public enum Fuzz {
    /// The input being replayed, named in a failure message (replay mode only).
    nonisolated(unsafe) static var currentInput: String?

    /// `KIOSKCAM_FUZZ_VERBOSE=1`: targets print what they do (to read a reproducer).
    public static let verbose = ProcessInfo.processInfo.environment["KIOSKCAM_FUZZ_VERBOSE"] == "1"

    /// Prints to standard error when `verbose` (unbuffered: the last line before a trap counts).
    public static func trace(_ message: @autoclosure () -> String) {
        if verbose { FileHandle.standardError.write(Data((message() + "\n").utf8)) }
    }

    /// Stops the process when a property does not hold: under libFuzzer the input is saved
    /// as a crash; in replay mode the file is named.
    public static func require(_ condition: @autoclosure () -> Bool, _ message: @autoclosure () -> String,
                               file: StaticString = #fileID, line: UInt = #line) {
        guard !condition() else { return }
        let input = currentInput.map { " (input \($0))" } ?? ""
        FileHandle.standardError.write(Data("property failed at \(file):\(line)\(input): \(message())\n".utf8))
        abort()
    }

    /// The target's entry point. Built by `scripts/fuzz` (`-DFUZZING -sanitize=fuzzer`) it
    /// hands control to libFuzzer, which then calls `body` with each input it makes up; in a
    /// plain build it replays the corpus (`replay`).
    ///
    /// libFuzzer's own `main` cannot be used: SwiftPM links an executable's `main` to the
    /// module's entry point, so the entry point starts libFuzzer's driver itself.
    public static func main(_ name: String, _ body: @escaping (UnsafeRawBufferPointer) -> Void) -> Never {
        #if FUZZING
        target = body
        var argc = CommandLine.argc
        var argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = CommandLine.unsafeArgv
        exit(LLVMFuzzerRunDriver(&argc, &argv) { data, size in
            Fuzz.target?(UnsafeRawBufferPointer(start: data, count: size))
            return 0
        })
        #else
        replay(name, body)
        exit(0)
        #endif
    }

    #if FUZZING
    nonisolated(unsafe) static var target: ((UnsafeRawBufferPointer) -> Void)?
    #endif

    /// Runs `body` once on every file of the corpus folder (`Fuzz/corpus/<name>`, found
    /// from this source file), or on the files and folders given as arguments.
    ///
    /// A plain `swift build` builds this instead of the libFuzzer entry point, so every
    /// saved input stays a regression test without the sanitizer toolchain.
    public static func replay(_ name: String, _ body: (UnsafeRawBufferPointer) -> Void) {
        let sourceRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        var arguments = Array(CommandLine.arguments.dropFirst())
        if arguments.isEmpty { arguments = [sourceRoot.appendingPathComponent("corpus/\(name)").path] }
        var paths: [String] = []
        for argument in arguments {
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: argument, isDirectory: &isDirectory) else {
                FileHandle.standardError.write(Data("\(name): \(argument) does not exist\n".utf8))
                exit(66)
            }
            if isDirectory.boolValue {
                let names = (try? FileManager.default.contentsOfDirectory(atPath: argument)) ?? []
                paths += names.filter { !$0.hasPrefix(".") }.sorted().map { argument + "/" + $0 }
            } else {
                paths.append(argument)
            }
        }
        let started = Date()
        for path in paths {
            guard let data = FileManager.default.contents(atPath: path) else { continue }
            currentInput = path
            data.withUnsafeBytes { body($0) }
        }
        currentInput = nil
        print("\(name): \(paths.count) inputs replayed in \(String(format: "%.1f", Date().timeIntervalSince(started))) s, no property failed")
    }
}

/// A folder for targets that work on files, made once per process and removed at exit.
/// It is under `$TMPDIR` when set (`scripts/fuzz` points it at a folder it removes, so even
/// a crashed run leaves nothing behind), else in `/dev/shm`, where an `fsync` costs nothing.
public enum FuzzScratch {
    public static let path: String = {
        let environment = ProcessInfo.processInfo.environment
        let base = environment["TMPDIR"].flatMap { $0.isEmpty ? nil : $0 }
            ?? (FileManager.default.isWritableFile(atPath: "/dev/shm") ? "/dev/shm" : "/tmp")
        let path = base + "/kioskcam-fuzz-\(getpid())"
        try? FileManager.default.removeItem(atPath: path)
        try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        atexit { try? FileManager.default.removeItem(atPath: FuzzScratch.path) }
        return path
    }()

    /// Removes everything inside `folder`, keeping the folder itself.
    public static func empty(_ folder: String) {
        for name in (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? [] {
            try? FileManager.default.removeItem(atPath: folder + "/" + name)
        }
    }
}

/// Reads typed values from the front of a fuzz input; past the end every value is zero,
/// so any input is a valid program for a target.
public struct FuzzReader {
    private let bytes: UnsafeRawBufferPointer
    private var offset = 0

    public init(_ bytes: UnsafeRawBufferPointer) { self.bytes = bytes }

    public var isAtEnd: Bool { offset >= bytes.count }
    public var remainingCount: Int { max(0, bytes.count - offset) }

    public mutating func byte() -> UInt8 {
        guard offset < bytes.count else { return 0 }
        defer { offset += 1 }
        return bytes[offset]
    }

    /// Little-endian, from as many bytes as are left.
    public mutating func integer<T: FixedWidthInteger>(_: T.Type = T.self) -> T {
        var value: T.Magnitude = 0
        for index in 0..<(T.bitWidth / 8) {
            value |= T.Magnitude(byte()) << (8 * index)
        }
        return T(truncatingIfNeeded: value)
    }
}
