import Foundation
import KioskTestSupport
import XCTest

/// What `kioskcam` finishes, as players read it, and what it refuses to read, through the
/// program itself (issue 29). scripts/test runs these against the debug build and again
/// against kioskcam as it ships (KIOSKCAM_PROGRAM): its own FFmpeg, whose only demuxers
/// are mov, wav and jpeg_pipe.
final class FinishedFilesTests: XCTestCase {
    func kioskcam(_ arguments: [String]) throws -> Tool.Output {
        try Tool.run(Package.kioskcamBinary, arguments, allowFailure: true)
    }

    /// A recording and a sound recording: GStreamer, MediaInfo and ffprobe each say it
    /// lasts as long as its packets do, within one frame, and its header's average bitrate
    /// is the one its packets have, within 10 %.
    func testPlayersReadARecordingsRealLengthAndBitrate() throws {
        let folder = TemporaryDirectory()
        for (extra, video) in [(["--size", "320x240"], true), (["--audio-only"], false)] {
            let result = try kioskcam(["record", "--duration", "3s", "--root", folder.path, "--quiet"] + extra)
            XCTAssertEqual(result.status, 0, result.stderr)
            let path = result.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
            XCTAssertTrue(path.hasSuffix(video ? ".mp4" : ".m4a"), path)
            let end = try PlayersRead.packetEnd(path)
            XCTAssertEqual(end, 3, accuracy: 0.5, "\(path): the recording is as long as asked")
            // One video frame at the test pattern's 30 fps, or one AAC frame at 48 kHz.
            let frame = video ? 1.0 / 30 : 1024.0 / 48_000
            for (player, seconds) in try PlayersRead.durations(path) {
                XCTAssertEqual(seconds, end, accuracy: frame, "\(path): \(player) says \(seconds) s for \(end) s")
            }
            let rates = try PlayersRead.headerBitrates(path, box: video ? "btrt" : "esds")
            let streams = video ? ["v", "a"] : ["a"]
            XCTAssertEqual(rates.count, streams.count, path)
            for (rate, stream) in zip(rates, streams) {
                let measured = try PlayersRead.packetBytes(path, stream) * 8 / end
                XCTAssertEqual(Double(rate.average), measured, accuracy: measured * 0.10, "\(path) \(stream): average bitrate")
            }
        }
    }

    /// An HLS playlist, an ffconcat list, Matroska and AVI under a recording's name: `play`,
    /// `export`, `waveform` and `salvage` each refuse it, naming what it is where it is a
    /// container, and nothing it lists is read.
    func testAnotherContainerUnderARecordingsNameIsRefusedByEveryReader() throws {
        let folder = TemporaryDirectory()
        let listed = folder.path + "/listed.ts", playlist = folder.path + "/playlist.mp4"
        try TestMedia.writeHLSPlaylist(playlist, listing: listed)
        let concat = folder.path + "/concat.mp4"
        try "ffconcat version 1.0\nfile '\(listed)'\n".write(toFile: concat, atomically: true, encoding: .utf8)
        let matroska = folder.path + "/matroska.mp4", avi = folder.path + "/avi.m4a"
        for (path, format) in [(matroska, "matroska"), (avi, "avi")] {
            try Tool.run("/usr/bin/ffmpeg", ["-v", "error", "-f", "lavfi", "-i", "testsrc=size=64x64:rate=10:duration=1",
                                             "-f", "lavfi", "-i", "sine=duration=1", "-f", format, path])
        }
        let cases = [(playlist, "an HLS playlist"), (concat, "not a recognised media file"),
                     (matroska, "a Matroska or WebM file"), (avi, "a RIFF file that is not WAV (AVI?)")]
        for (path, what) in cases {
            let name = (path as NSString).lastPathComponent
            for arguments in [["play", path, "--device", "alsa:null"],
                              ["export", path, "--to", "1", "-o", folder.path + "/out.mp4"],
                              ["waveform", path, "-o", folder.path + "/out.png"]] {
                let result = try kioskcam(arguments)
                XCTAssertEqual(result.status, 1, "\(arguments): \(result.stderr)")
                XCTAssertTrue(result.stderr.contains("\(name): it is \(what), not an MP4, M4A or WAV file"), "\(arguments): \(result.stderr)")
            }
        }
        XCTAssertFalse(FileManager.default.fileExists(atPath: folder.path + "/out.mp4"))
        XCTAssertFalse(FileManager.default.fileExists(atPath: folder.path + "/out.png"))

        // In the temp area, as a recording cut by a crash: salvage names the container and
        // keeps the big one for a person (the playlist is too small to hold a recording).
        let root = folder.path + "/library"
        try FileManager.default.createDirectory(atPath: root + "/.incoming", withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: playlist, toPath: root + "/.incoming/video-20261130-101500.mp4.part")
        try FileManager.default.copyItem(atPath: avi, toPath: root + "/.incoming/audio-20261130-101501.m4a.part")
        let salvage = try kioskcam(["salvage", "--root", root])
        XCTAssertEqual(salvage.status, 1, salvage.stdout + salvage.stderr)
        XCTAssertTrue(salvage.stdout.contains("the file has no MP4 header (it is an HLS playlist)"), salvage.stdout)
        XCTAssertTrue(salvage.stdout.contains("(it is a RIFF file that is not WAV (AVI?))"), salvage.stdout)
        XCTAssertTrue(FileManager.default.fileExists(atPath: root + "/.quarantine/audio-20261130-101501.m4a"), salvage.stdout)
        let library = (FileManager.default.subpaths(atPath: root) ?? []).filter { path in
            var folder: ObjCBool = false
            return !path.hasPrefix(".") && FileManager.default.fileExists(atPath: root + "/" + path, isDirectory: &folder) && !folder.boolValue
        }
        XCTAssertEqual(library, [], "nothing reached the library")
    }
}
