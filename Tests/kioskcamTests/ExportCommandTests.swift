import Foundation
import KioskTestSupport
import XCTest

/// `kioskcam export` on real recordings made by the real binary.
final class ExportCommandTests: XCTestCase {
    /// One 6 s video (320x240, 30 fps, a keyframe every 30 frames) and one 3 s sound
    /// recording, made once for the whole class: recording runs in real time.
    struct Recordings {
        let folder: TemporaryDirectory
        let video: String
        let audio: String
    }
    nonisolated(unsafe) private static var shared: Recordings?

    var binary: String { Package.kioskcamBinary }

    func kioskcam(_ arguments: [String]) throws -> Tool.Output {
        try Tool.run(binary, arguments, allowFailure: true)
    }

    func recordings() throws -> Recordings {
        if let shared = Self.shared { return shared }
        let folder = TemporaryDirectory("kioskcam-export")
        let video = try kioskcam(["record", "--camera", "test", "--size", "320x240", "--duration", "6s", "--root", folder.path, "--quiet"])
        XCTAssertEqual(video.status, 0, video.stderr)
        let audio = try kioskcam(["record", "--audio-only", "--mic", "tone", "--duration", "3s", "--root", folder.path, "--quiet"])
        XCTAssertEqual(audio.status, 0, audio.stderr)
        let made = Recordings(folder: folder, video: video.stdout.trimmingCharacters(in: .whitespacesAndNewlines),
                              audio: audio.stdout.trimmingCharacters(in: .whitespacesAndNewlines))
        Self.shared = made
        return made
    }

    /// One MD5 per video packet, as stored (`-c copy`): equal lists mean equal bytes.
    func videoPacketHashes(_ path: String) throws -> [String] {
        let output = try Tool.run("ffmpeg", ["-v", "error", "-i", path, "-map", "0:v", "-c", "copy", "-f", "framemd5", "-"])
        return output.stdout.split(separator: "\n").filter { !$0.hasPrefix("#") }
            .compactMap { $0.split(separator: ",").last.map { $0.trimmingCharacters(in: .whitespaces) } }
    }

    func testCopyFromAKeyframeKeepsThePacketsAsTheyWere() throws {
        let recordings = try recordings()
        let out = recordings.folder.path + "/clip.mp4"
        let result = try kioskcam(["export", recordings.video, "--from", "1", "--to", "3", "-o", out])
        XCTAssertEqual(result.status, 0, result.stderr)
        XCTAssertEqual(result.stdout.trimmingCharacters(in: .whitespacesAndNewlines), out)
        XCTAssertFalse(result.stderr.contains("between keyframes"), result.stderr)
        let probe = try FFprobe.probe(out)
        XCTAssertEqual(probe.video?.codec_name, "h264")
        XCTAssertEqual(probe.audio?.codec_name, "aac")
        XCTAssertEqual(probe.video?.width, 320)
        XCTAssertEqual(probe.video?.frameCount, 60)
        XCTAssertEqual(probe.video?.durationSeconds ?? 0, 2, accuracy: 1.0 / 30)
        XCTAssertEqual(probe.format.durationSeconds, 2, accuracy: 0.05)
        XCTAssertEqual(probe.video?.startSeconds ?? 1, 0, accuracy: 0.001)
        // Not re-encoded: the clip's packets are the source's frames 30…89, byte for byte.
        let source = try videoPacketHashes(recordings.video)
        XCTAssertGreaterThanOrEqual(source.count, 90)
        XCTAssertEqual(try videoPacketHashes(out), Array(source[30..<90]))
    }

    func testKeyframeStartCopiesFromTheKeyframeBeforeAndSaysSo() throws {
        let recordings = try recordings()
        let out = recordings.folder.path + "/between.mp4"
        let result = try kioskcam(["export", recordings.video, "--from", "00:00:01.50", "--to", "3s", "--keyframe-start", "-o", out])
        XCTAssertEqual(result.status, 0, result.stderr)
        XCTAssertTrue(result.stderr.contains("lies between keyframes"), result.stderr)
        // It names the keyframe before 1.5 s as the file has it: frame 30, at 1 s as the
        // test pattern paced it (0.99 s when a loaded machine paced it a frame's jitter early).
        let keyframes = try FFprobe.packets(recordings.video).filter(\.isKeyframe).map(\.time)
        let before = try XCTUnwrap(keyframes.last { $0 <= 1.5 }, "keyframes: \(keyframes)")
        XCTAssertEqual(before, 1, accuracy: 1.0 / 30, "keyframes: \(keyframes)")
        let named = result.stderr.range(of: #"at the keyframe at [0-9.]+ s"#, options: .regularExpression)
            .flatMap { Double(result.stderr[$0].dropFirst("at the keyframe at ".count).dropLast(2)) }
        // The message rounds to hundredths.
        XCTAssertEqual(try XCTUnwrap(named, result.stderr), before, accuracy: 0.0051, result.stderr)
        let probe = try FFprobe.probe(out)
        // Keyframe-exact: from frame 30 (1.0 s), not frame 45 (1.5 s).
        XCTAssertEqual(probe.video?.frameCount, 60)
        XCTAssertEqual(probe.video?.durationSeconds ?? 0, 2, accuracy: 1.0 / 30)
        let source = try videoPacketHashes(recordings.video)
        XCTAssertEqual(try videoPacketHashes(out).first, source[30])
    }

    /// One decoded picture as 8-bit grey, via ffmpeg: `index` counts frames from 0.
    func greyFrame(_ path: String, index: Int, folder: String) throws -> [UInt8] {
        let out = folder + "/frame-\(UUID().uuidString.prefix(8)).gray"
        try Tool.run("ffmpeg", ["-v", "error", "-i", path, "-vf", "select=eq(n\\,\(index))", "-frames:v", "1",
                                "-f", "rawvideo", "-pix_fmt", "gray", "-y", out])
        return [UInt8](try Data(contentsOf: URL(fileURLWithPath: out)))
    }

    func meanDifference(_ a: [UInt8], _ b: [UInt8]) -> Double {
        guard a.count == b.count, !a.isEmpty else { return .infinity }
        return Double(zip(a, b).reduce(0) { $0 + abs(Int($1.0) - Int($1.1)) }) / Double(a.count)
    }

    func testExactStartsOnTheFrameAtFrom() throws {
        let recordings = try recordings()
        let out = recordings.folder.path + "/exact.mp4"
        let result = try kioskcam(["export", recordings.video, "--from", "1.5", "--to", "3", "--exact", "-o", out])
        XCTAssertEqual(result.status, 0, result.stderr)
        XCTAssertTrue(result.stderr.contains("frame-exact"), result.stderr)
        let probe = try FFprobe.probe(out)
        XCTAssertEqual(probe.video?.codec_name, "h264")
        XCTAssertEqual(probe.audio?.codec_name, "aac")
        XCTAssertEqual(probe.video?.frameCount, 45)
        XCTAssertEqual(probe.video?.durationSeconds ?? 0, 1.5, accuracy: 1.0 / 30)
        // The first picture is the source's frame 45 (its burned-in frame number and
        // clock differ from its neighbours'), not the keyframe at 30 before it.
        let first = try greyFrame(out, index: 0, folder: recordings.folder.path)
        let differences = try [44, 45, 46, 30].map {
            meanDifference(first, try greyFrame(recordings.video, index: $0, folder: recordings.folder.path))
        }
        XCTAssertLessThan(differences[1], differences[0], "\(differences)")
        XCTAssertLessThan(differences[1], differences[2], "\(differences)")
        XCTAssertLessThan(differences[1], differences[3], "\(differences)")
    }

    /// The first picture of a clip is the source's frame `index` (its burned-in frame number
    /// and clock differ from its neighbours'), not one near it.
    func assertFirstPicture(of clip: String, isSourceFrame index: Int, recordings: Recordings,
                            file: StaticString = #filePath, line: UInt = #line) throws {
        let first = try greyFrame(clip, index: 0, folder: recordings.folder.path)
        let differences = try [index - 1, index, index + 1, index / 30 * 30].map {
            meanDifference(first, try greyFrame(recordings.video, index: $0, folder: recordings.folder.path))
        }
        XCTAssertLessThan(differences[1], differences[0], "\(differences)", file: file, line: line)
        XCTAssertLessThan(differences[1], differences[2], "\(differences)", file: file, line: line)
        XCTAssertLessThan(differences[1], differences[3], "\(differences)", file: file, line: line)
    }

    func testSmartCutReencodesUpToTheNextKeyframeAndCopiesTheRest() throws {
        let recordings = try recordings()
        let out = recordings.folder.path + "/smart.mp4"
        let result = try kioskcam(["export", recordings.video, "--from", "1.5", "--to", "4", "-o", out])
        XCTAssertEqual(result.status, 0, result.stderr)
        XCTAssertTrue(result.stderr.contains("smart cut: re-encoded 15 frames"), result.stderr)
        let probe = try FFprobe.probe(out)
        XCTAssertEqual(probe.video?.codec_name, "h264")
        XCTAssertEqual(probe.audio?.codec_name, "aac")
        // Frame-exact: frames 45…119 of the source, 15 re-encoded and 60 copied.
        XCTAssertEqual(probe.video?.frameCount, 75)
        XCTAssertEqual(probe.video?.durationSeconds ?? 0, 2.5, accuracy: 1.0 / 30)
        XCTAssertEqual(probe.video?.startSeconds ?? 1, 0, accuracy: 0.001)
        XCTAssertEqual(probe.format.durationSeconds, 2.5, accuracy: 0.05)
        try assertFirstPicture(of: out, isSourceFrame: 45, recordings: recordings)
        // The copied part is the source's packets from the keyframe at 2 s, byte for byte.
        let source = try videoPacketHashes(recordings.video)
        let clip = try videoPacketHashes(out)
        XCTAssertEqual(clip.count, 75)
        XCTAssertEqual(Array(clip.suffix(60)), Array(source[60..<120]))
        XCTAssertNotEqual(clip.first, source[45], "the head is re-encoded")
        // Every picture decodes without a complaint: both parts find their SPS/PPS.
        XCTAssertEqual(try FFmpegDecode.complaints(out), "")
        // The first copied picture is still the source's frame 60, decoded.
        let copied = try greyFrame(out, index: 15, folder: recordings.folder.path)
        XCTAssertEqual(meanDifference(copied, try greyFrame(recordings.video, index: 60, folder: recordings.folder.path)), 0)
    }

    func testACutWithinOneGOPIsReencodedWhole() throws {
        let recordings = try recordings()
        let out = recordings.folder.path + "/short.mp4"
        let result = try kioskcam(["export", recordings.video, "--from", "2.2", "--to", "2.8", "-o", out])
        XCTAssertEqual(result.status, 0, result.stderr)
        XCTAssertTrue(result.stderr.contains("no keyframe between --from and --to: re-encoded all 18 frames"), result.stderr)
        XCTAssertEqual(try FFprobe.probe(out).video?.frameCount, 18)
        try assertFirstPicture(of: out, isSourceFrame: 66, recordings: recordings)
    }

    func testReencodeToASmallerSizeAndBitrate() throws {
        let recordings = try recordings()
        let out = recordings.folder.path + "/small.mp4"
        let result = try kioskcam(["export", recordings.video, "--from", "1", "--to", "5", "--reencode",
                                   "--size", "160x120", "--bitrate", "200", "-o", out])
        XCTAssertEqual(result.status, 0, result.stderr)
        let probe = try FFprobe.probe(out)
        XCTAssertEqual(probe.video?.width, 160)
        XCTAssertEqual(probe.video?.height, 120)
        XCTAssertEqual(probe.video?.frameCount, 120)
        XCTAssertEqual(probe.format.durationSeconds, 4, accuracy: 0.05)
        // Video bytes over the clip: no more than the asked 200 kbit/s and a margin.
        let packets = try Tool.run("ffprobe", ["-v", "error", "-select_streams", "v", "-show_entries", "packet=size", "-of", "csv=p=0", out])
        let bytes = packets.stdout.split(separator: "\n").compactMap { Int($0) }.reduce(0, +)
        let kbits = Double(bytes * 8) / 4 / 1000
        XCTAssertGreaterThan(kbits, 5)
        XCTAssertLessThan(kbits, 300)
    }

    func testToBeyondTheEndIsMovedToTheEndAndSaysSo() throws {
        let recordings = try recordings()
        let out = recordings.folder.path + "/tail.mp4"
        let length = try FFprobe.probe(recordings.video, countFrames: false).video?.durationSeconds ?? .nan
        let result = try kioskcam(["export", recordings.video, "--from", "4", "--to", "1m", "-o", out])
        XCTAssertEqual(result.status, 0, result.stderr)
        XCTAssertTrue(result.stderr.contains("beyond the end of the recording"), result.stderr)
        XCTAssertEqual(try FFprobe.probe(out).video?.durationSeconds ?? 0, length - 4, accuracy: 1.0 / 30)
    }

    func testSoundToWAVIsCutToTheSample() throws {
        let recordings = try recordings()
        let out = recordings.folder.path + "/sound.wav"
        let result = try kioskcam(["export", recordings.audio, "--from", "0.5", "--to", "2", "-o", out])
        XCTAssertEqual(result.status, 0, result.stderr)
        let probe = try FFprobe.probe(out)
        let audio = try XCTUnwrap(probe.audio)
        XCTAssertEqual(audio.codec_name, "pcm_s16le")
        XCTAssertEqual(audio.channels, 1)
        let rate = try XCTUnwrap(audio.sample_rate.flatMap(Double.init))
        XCTAssertEqual(probe.format.durationSeconds, 1.5, accuracy: 1 / rate + 1e-6)
        let bytes = try XCTUnwrap(FileManager.default.attributesOfItem(atPath: out)[.size] as? Int)
        XCTAssertEqual(bytes, 44 + Int(1.5 * rate) * 2)
    }

    func testSoundToM4AIsCopied() throws {
        let recordings = try recordings()
        let out = recordings.folder.path + "/sound.m4a"
        let result = try kioskcam(["export", recordings.audio, "--from", "1", "-o", out])
        XCTAssertEqual(result.status, 0, result.stderr)
        let probe = try FFprobe.probe(out)
        XCTAssertEqual(probe.audio?.codec_name, "aac")
        XCTAssertNil(probe.video)
        let length = try FFprobe.probe(recordings.audio, countFrames: false).format.durationSeconds
        XCTAssertEqual(probe.format.durationSeconds, length - 1, accuracy: 0.05)
    }

    func testBadInputsAreClearErrors() throws {
        let recordings = try recordings()
        let folder = recordings.folder.path
        let notMedia = folder + "/notes.mp4"
        try Data("not a video\n".utf8).write(to: URL(fileURLWithPath: notMedia))
        let existing = folder + "/existing.mp4"
        try Data().write(to: URL(fileURLWithPath: existing))
        let cases: [(arguments: [String], status: Int32, message: String)] = [
            (["export", folder + "/missing.mp4", "--from", "1", "--to", "2", "-o", folder + "/a.mp4"], 1, "does not exist"),
            (["export", recordings.video, "--from", "3", "--to", "1", "-o", folder + "/b.mp4"], 64, "give a --from earlier than --to"),
            (["export", recordings.video, "--from", "2", "--to", "2", "-o", folder + "/b.mp4"], 64, "is not before --to"),
            (["export", recordings.video, "--from", "9", "--to", "12", "-o", folder + "/c.mp4"], 64, "beyond the end of the recording"),
            (["export", recordings.video, "--from", "soon", "-o", folder + "/d.mp4"], 64, "is not a time"),
            (["export", recordings.video, "--to", "1:75", "-o", folder + "/d.mp4"], 64, "is not a time"),
            (["export", notMedia, "--to", "1", "-o", folder + "/e.mp4"], 1, "notes.mp4"),
            (["export", folder + "/notes.txt", "--to", "1", "-o", folder + "/e.mp4"], 1, "does not exist"),
            (["export", recordings.video, "--to", "1", "-o", existing], 64, "give --force to replace it"),
            (["export", recordings.video, "--to", "1", "-o", recordings.video, "--force"], 64, "the recording itself"),
            (["export", recordings.video, "--to", "1", "-o", folder + "/f.avi"], 64, "name the clip .mp4"),
            (["export", recordings.video, "--to", "1", "-o", folder + "/g.m4a"], 64, "holds video"),
            (["export", recordings.audio, "--to", "1", "-o", folder + "/h.mp4"], 64, "holds sound only"),
            (["export", recordings.video, "--to", "1", "--size", "160x120", "-o", folder + "/j.mp4"], 64, "need --reencode"),
            (["export", recordings.video, "--to", "1", "--reencode", "--size", "161x120", "-o", folder + "/j.mp4"], 64, "use even WxH"),
            (["export", recordings.video, "--to", "1", "--reencode", "--bitrate", "0", "-o", folder + "/j.mp4"], 64, "kbit/s from 50"),
            (["export", recordings.audio, "--to", "1", "--exact", "-o", folder + "/k.wav"], 64, "write video (.mp4)"),
            (["export", recordings.video, "--from", "1.5", "--exact", "--keyframe-start", "-o", folder + "/ks.mp4"], 64, "--keyframe-start copies"),
        ]
        for (arguments, status, message) in cases {
            let result = try kioskcam(arguments)
            XCTAssertEqual(result.status, status, "\(arguments): \(result.stderr)")
            XCTAssertTrue(result.stderr.contains("kioskcam: error:") && result.stderr.contains(message), "\(arguments): \(result.stderr)")
            XCTAssertFalse(result.stderr.contains("Fatal error"), result.stderr)
        }
        // A foreign file with a non-recording extension is refused before FFmpeg reads it.
        let text = folder + "/notes.txt"
        try Data("text".utf8).write(to: URL(fileURLWithPath: text))
        let foreign = try kioskcam(["export", text, "--to", "1", "-o", folder + "/i.mp4"])
        XCTAssertEqual(foreign.status, 1, foreign.stderr)
        XCTAssertTrue(foreign.stderr.contains("is not a recording"), foreign.stderr)
        // Nothing was left behind by the failures: no clip, no partial file.
        for name in ["a.mp4", "b.mp4", "c.mp4", "d.mp4", "e.mp4", "e.mp4.partial", "f.avi", "g.m4a", "h.mp4", "i.mp4", "j.mp4", "k.wav"] {
            XCTAssertFalse(FileManager.default.fileExists(atPath: folder + "/" + name), name)
        }
        // --force replaces the existing file with a real clip.
        let forced = try kioskcam(["export", recordings.video, "--to", "1", "-o", existing, "--force"])
        XCTAssertEqual(forced.status, 0, forced.stderr)
        XCTAssertEqual(try FFprobe.probe(existing).video?.frameCount, 30)
    }
}
