import Foundation

/// What `ffprobe` says about a media file: the ground truth tests check against.
public struct ProbeResult: Decodable {
    public struct Stream: Decodable {
        public var codec_type: String
        public var codec_name: String
        public var width: Int?
        public var height: Int?
        public var pix_fmt: String?
        public var sample_rate: String?
        public var channels: Int?
        public var start_time: String?
        public var duration: String?
        public var nb_read_frames: String?
        public var nb_read_packets: String?

        public var startSeconds: Double { start_time.flatMap(Double.init) ?? .nan }
        public var durationSeconds: Double { duration.flatMap(Double.init) ?? .nan }
        public var frameCount: Int { nb_read_frames.flatMap(Int.init) ?? nb_read_packets.flatMap(Int.init) ?? -1 }
    }

    public struct Format: Decodable {
        public var format_name: String
        public var duration: String?
        public var durationSeconds: Double { duration.flatMap(Double.init) ?? .nan }
    }

    public var streams: [Stream]
    public var format: Format

    public var video: Stream? { streams.first { $0.codec_type == "video" } }
    public var audio: Stream? { streams.first { $0.codec_type == "audio" } }
}

public enum FFprobe {
    /// Probes `path`, counting frames (slow for long files, exact).
    /// - Throws: `ToolError` when ffprobe fails (unreadable file).
    public static func probe(_ path: String, countFrames: Bool = true) throws -> ProbeResult {
        var arguments = ["-v", "error", "-of", "json", "-show_streams", "-show_format"]
        if countFrames { arguments.append("-count_frames") }
        let output = try Tool.run("ffprobe", arguments + [path])
        return try JSONDecoder().decode(ProbeResult.self, from: Data(output.stdout.utf8))
    }

    /// One stored packet: its presentation time (seconds) and whether it is a keyframe.
    public struct Packet: Equatable {
        public var time: Double
        public var isKeyframe: Bool
    }

    /// The packets of `stream` ("v", "a", "v:0") in `path`, sorted by time: one ffprobe
    /// read for frame gaps, keyframe times and how far a growing `.part` has got.
    /// - Throws: `ToolError` when ffprobe fails (unless `allowFailure`, which reads what it printed).
    public static func packets(_ path: String, stream: String = "v", allowFailure: Bool = false) throws -> [Packet] {
        let output = try Tool.run("ffprobe", ["-v", "error", "-select_streams", stream, "-show_entries", "packet=pts_time,flags",
                                              "-of", "csv=p=0", path], allowFailure: allowFailure)
        return output.stdout.split(whereSeparator: \.isNewline).compactMap { line -> Packet? in
            let fields = line.split(separator: ",", omittingEmptySubsequences: false)
            guard let time = fields.first.flatMap({ Double($0.trimmingCharacters(in: .whitespaces)) }) else { return nil }
            return Packet(time: time, isKeyframe: fields.count > 1 && fields[1].contains("K"))
        }.sorted { $0.time < $1.time }
    }
}

/// A failed external command, with what it printed.
public struct ToolError: Error, CustomStringConvertible {
    public var command: String
    public var status: Int32
    public var stderr: String
    public var description: String { "\(command) exited \(status): \(stderr)" }

    public init(command: String, status: Int32, stderr: String) {
        self.command = command
        self.status = status
        self.stderr = stderr
    }
}

public enum Tool {
    public struct Output {
        public var status: Int32
        public var stdout: String
        public var stderr: String
    }

    /// Runs a program found on PATH (or an absolute path) to completion.
    @discardableResult
    public static func run(_ program: String, _ arguments: [String], allowFailure: Bool = false) throws -> Output {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: program.hasPrefix("/") ? program : "/usr/bin/env")
        process.arguments = program.hasPrefix("/") ? arguments : [program] + arguments
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        process.standardInput = FileHandle.nullDevice
        try process.run()
        // Read both pipes before waiting so a chatty child cannot block on a full pipe.
        let errData = ReadAll(err.fileHandleForReading)
        let outData = out.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        let output = Output(status: process.terminationStatus, stdout: String(decoding: outData, as: UTF8.self),
                            stderr: String(decoding: errData.wait(), as: UTF8.self))
        if !allowFailure && output.status != 0 {
            throw ToolError(command: ([program] + arguments).joined(separator: " "), status: output.status, stderr: output.stderr)
        }
        return output
    }
}

/// The ffmpeg CLI decoding a whole file to nothing: the check that every picture and sound
/// of a recording decodes.
public enum FFmpegDecode {
    /// What the CLI said while decoding every stream of `path`: "" for a file without
    /// damage, else its words (with its exit status when it failed). `-xerror` stops at
    /// the first fault. `-enc_time_base -1` keeps the file's own time base: a recording's
    /// times are capture times (1/90000 s), and a loaded machine can set two pictures
    /// 10 ms apart, which in the CLI's default 1/30 s share a tick that its null muxer
    /// reports as a dts fault although every picture decodes.
    public static func complaints(_ path: String) throws -> String {
        let decode = try Tool.run("/usr/bin/ffmpeg", ["-v", "error", "-nostdin", "-xerror", "-i", path,
                                                      "-enc_time_base", "-1", "-f", "null", "-"], allowFailure: true)
        let words = decode.stderr.trimmingCharacters(in: .whitespacesAndNewlines)
        return decode.status == 0 ? words : "exit \(decode.status)" + (words.isEmpty ? "" : ": " + words)
    }
}

/// Reads a pipe to its end on a background thread.
public final class ReadAll: @unchecked Sendable {
    private var data = Data()
    private let done = DispatchSemaphore(value: 0)

    public init(_ handle: FileHandle) {
        Thread.detachNewThread { [self] in
            data = handle.readDataToEndOfFile()
            done.signal()
        }
    }

    public func wait() -> Data {
        done.wait()
        return data
    }
}

/// A fresh folder under /tmp, removed when it is released and, at the latest, when the
/// test process exits: XCTest on Linux keeps every test case, and the folder its `setUp`
/// made, until the end, so release alone left some two hundred folders a run in /tmp.
public final class TemporaryDirectory {
    public let path: String

    public init(_ label: String = "kioskcam-test") {
        path = NSTemporaryDirectory() + "\(label)-\(UUID().uuidString.prefix(8))"
        try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        TemporaryDirectory.removeAtExit(path)
    }

    private static let madeLock = NSLock()
    nonisolated(unsafe) private static var made: [String] = []
    private static let exitHandler: Void = {
        atexit {
            TemporaryDirectory.madeLock.lock()
            let paths = TemporaryDirectory.made
            TemporaryDirectory.madeLock.unlock()
            for path in paths { try? FileManager.default.removeItem(atPath: path) }
        }
    }()

    private static func removeAtExit(_ path: String) {
        _ = exitHandler
        madeLock.lock()
        made.append(path)
        madeLock.unlock()
    }

    deinit { try? FileManager.default.removeItem(atPath: path) }

    /// Every regular file below the folder, relative paths, sorted.
    public func files() -> [String] {
        let enumerator = FileManager.default.enumerator(atPath: path)
        var found: [String] = []
        while let item = enumerator?.nextObject() as? String {
            var isDirectory: ObjCBool = false
            if FileManager.default.fileExists(atPath: path + "/" + item, isDirectory: &isDirectory), !isDirectory.boolValue {
                found.append(item)
            }
        }
        return found.sorted()
    }
}

/// The package's root and its freshly built `kioskcam`.
public enum Package {
    public static func root(file: String = #filePath) -> String {
        var url = URL(fileURLWithPath: file)
        while url.path != "/" {
            url.deleteLastPathComponent()
            if FileManager.default.fileExists(atPath: url.appendingPathComponent("Package.swift").path) { return url.path }
        }
        return FileManager.default.currentDirectoryPath
    }

    /// `swift test` builds the executable beside the test bundle, in whichever scratch path
    /// it was given: the one beside the running tests is built with the same flags, so
    /// under `scripts/sanitize` (`.build-tsan`, `.build-asan`) the sanitized binary runs.
    /// `.build/debug` is only the last resort. KIOSKCAM_PROGRAM, when set, names another
    /// build to drive instead: scripts/test runs the media tests again against kioskcam as
    /// it ships (release, its own FFmpeg), whatever that path holds (a missing program is
    /// a failing test, never the debug build in its place).
    public static var kioskcamBinary: String {
        if let shipped = ProcessInfo.processInfo.environment["KIOSKCAM_PROGRAM"], !shipped.isEmpty { return shipped }
        let runnerDirectory = Bundle.main.executableURL?.resolvingSymlinksInPath().deletingLastPathComponent().path
        let bundleDirectory = Bundle.main.bundleURL.deletingLastPathComponent().path
        let candidates = [runnerDirectory.map { $0 + "/kioskcam" }, bundleDirectory + "/kioskcam",
                          Bundle.main.bundleURL.path + "/kioskcam", root() + "/.build/debug/kioskcam"]
        for candidate in candidates.compactMap({ $0 }) where FileManager.default.isExecutableFile(atPath: candidate) {
            return candidate
        }
        return root() + "/.build/debug/kioskcam"
    }

    /// The camera helper program, built beside `kioskcam` (and shipped beside it).
    public static var cameraHelperBinary: String {
        URL(fileURLWithPath: kioskcamBinary).deletingLastPathComponent().appendingPathComponent("kioskcam-camera").path
    }
}

/// Test inputs written the way real tools would.
public enum TestMedia {
    /// An MPEG transport stream at `stream` and an HLS playlist at `playlist` that lists it:
    /// FFmpeg's probe would open the playlist as HLS (whatever its name) and read the stream.
    public static func writeHLSPlaylist(_ playlist: String, listing stream: String) throws {
        try Tool.run("/usr/bin/ffmpeg", ["-v", "error", "-f", "lavfi", "-i", "testsrc=size=64x64:rate=10:duration=1", "-f", "mpegts", stream])
        try "#EXTM3U\n#EXT-X-TARGETDURATION:1\n#EXTINF:1.0,\n\(stream)\n#EXT-X-ENDLIST\n".write(toFile: playlist, atomically: true, encoding: .utf8)
    }

    /// A 16-bit PCM WAV of a sine tone.
    public static func writeWAV(_ path: String, seconds: Double, sampleRate: Int = 48_000, channels: Int = 1, frequency: Double = 440) throws {
        try writeWAV(path, frames: Int(seconds * Double(sampleRate)), sampleRate: sampleRate, channels: channels) { index, _ in
            Int16(sin(2 * Double.pi * frequency * Double(index) / Double(sampleRate)) * 8000)
        }
    }

    /// A 16-bit PCM WAV whose samples come from `sample(frame, channel)`.
    public static func writeWAV(_ path: String, frames: Int, sampleRate: Int, channels: Int,
                                sample: (_ frame: Int, _ channel: Int) -> Int16) throws {
        var data = Data()
        func le32(_ v: Int) { withUnsafeBytes(of: UInt32(v).littleEndian) { data.append(contentsOf: $0) } }
        func le16(_ v: Int) { withUnsafeBytes(of: UInt16(v).littleEndian) { data.append(contentsOf: $0) } }
        let dataBytes = frames * channels * 2
        data.append(contentsOf: Array("RIFF".utf8)); le32(36 + dataBytes); data.append(contentsOf: Array("WAVE".utf8))
        data.append(contentsOf: Array("fmt ".utf8)); le32(16); le16(1); le16(channels); le32(sampleRate)
        le32(sampleRate * channels * 2); le16(channels * 2); le16(16)
        data.append(contentsOf: Array("data".utf8)); le32(dataBytes)
        data.reserveCapacity(data.count + dataBytes)
        for frame in 0..<frames {
            for channel in 0..<channels {
                withUnsafeBytes(of: sample(frame, channel).littleEndian) { data.append(contentsOf: $0) }
            }
        }
        try data.write(to: URL(fileURLWithPath: path))
    }
}

extension TestMedia {
    /// A sound file made by the ffmpeg CLI with a sine on each side: `left` Hz on the
    /// left, `right` Hz on the right, in `layout` ("stereo", or "5.1" with the other
    /// channels silent), encoded with `codec` (the file name's extension picks the
    /// container). With `video`, a small test picture goes with it (libx264).
    public static func writeTones(_ path: String, left: Int, right: Int, seconds: Double = 2, layout: String = "stereo",
                                  codec: String = "aac", video: Bool = false) throws {
        var arguments = ["-v", "error", "-y"]
        if video { arguments += ["-f", "lavfi", "-i", "testsrc=size=160x120:rate=30:duration=\(seconds)"] }
        arguments += ["-f", "lavfi", "-i", "sine=frequency=\(left):sample_rate=48000:duration=\(seconds)",
                      "-f", "lavfi", "-i", "sine=frequency=\(right):sample_rate=48000:duration=\(seconds)"]
        let first = video ? 1 : 0
        arguments += ["-filter_complex", "[\(first):a][\(first + 1):a]amerge=inputs=2,pan=\(layout)|FL=c0|FR=c1[sound]",
                      "-map", "[sound]"]
        if video { arguments += ["-map", "0:v", "-c:v", "libx264", "-pix_fmt", "yuv420p"] }
        arguments += ["-c:a", codec, path]
        try Tool.run("ffmpeg", arguments)
    }

    /// The samples of a canonical 16-bit PCM WAV (44-byte header), interleaved.
    public static func readWAVSamples(_ path: String) throws -> [Int16] {
        let data = try Data(contentsOf: URL(fileURLWithPath: path))
        guard data.count >= 44 else { return [] }
        return stride(from: 44, to: data.count - 1, by: 2).map {
            Int16(bitPattern: UInt16(data[$0]) | UInt16(data[$0 + 1]) << 8)
        }
    }

    /// The frequency of the tone in one channel of interleaved samples, from its zero
    /// crossings (two per period).
    public static func toneHertz(_ samples: [Int16], channels: Int, channel: Int, sampleRate: Int) -> Double {
        let side = stride(from: channel, to: samples.count, by: channels).map { samples[$0] }
        guard side.count > 1 else { return 0 }
        let crossings = zip(side, side.dropFirst()).filter { ($0 < 0) != ($1 < 0) }.count
        return Double(crossings) / 2 / (Double(side.count) / Double(sampleRate))
    }
}
