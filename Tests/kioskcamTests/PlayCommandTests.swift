import Foundation
import Glibc
import KioskCore
import KioskTestSupport
import XCTest

/// `kioskcam play` as a user runs it. No sound card here: ALSA's `null` device takes
/// the sound (unpaced); bad devices and bad files must be clear errors, never a hang.
/// The timing and the sound itself are checked in the HIL guest (snd-aloop).
final class PlayCommandTests: XCTestCase {
    var binary: String { Package.kioskcamBinary }

    func kioskcam(_ arguments: [String]) throws -> Tool.Output {
        try Tool.run("/usr/bin/timeout", ["-k", "5", "30", binary] + arguments, allowFailure: true)
    }

    /// A 2 s 1 kHz AAC tone in an .m4a, and a picture-only .mp4 in H.264, as kioskcam
    /// writes them (the shipped kioskcam's FFmpeg decodes only what kioskcam makes).
    static func makeFiles(in folder: TemporaryDirectory) throws -> (tone: String, silent: String) {
        let tone = folder.path + "/tone.m4a"
        let silent = folder.path + "/picture.mp4"
        try Tool.run("/usr/bin/ffmpeg", ["-v", "error", "-y", "-f", "lavfi", "-i", "sine=frequency=1000:sample_rate=48000:duration=2",
                                         "-c:a", "aac", tone])
        try Tool.run("/usr/bin/ffmpeg", ["-v", "error", "-y", "-f", "lavfi", "-i", "testsrc=size=160x120:rate=10:duration=0.5",
                                         "-c:v", "libx264", "-preset", "ultrafast", "-pix_fmt", "yuv420p", silent])
        return (tone, silent)
    }

    func testPlaysATonesWholeLengthToTheNullDevice() throws {
        let folder = TemporaryDirectory()
        let files = try Self.makeFiles(in: folder)
        let result = try kioskcam(["play", files.tone, "--device", "alsa:null", "--volume", "0.5"])
        XCTAssertEqual(result.status, 0, result.stderr)
        XCTAssertTrue(result.stderr.contains("played 0:02.0 of \(files.tone) from 0:00.0 on null, underruns: 0"), result.stderr)
        XCTAssertTrue(result.stderr.contains("playing 0:02.0 / 0:02.0, underruns: 0"), "the progress line: \(result.stderr)")

        let late = try kioskcam(["play", files.tone, "--device", "alsa:null", "--from", "0:01.5"])
        XCTAssertEqual(late.status, 0, late.stderr)
        XCTAssertTrue(late.stderr.contains("played 0:00.5 of \(files.tone) from 0:01.5"), late.stderr)
    }

    func testStereoPlaysAsStereoAndSurroundIsFoldedToStereo() throws {
        let folder = TemporaryDirectory()
        let stereo = folder.path + "/stereo.m4a", surround = folder.path + "/surround.m4a"
        try TestMedia.writeTones(stereo, left: 440, right: 1000)
        try TestMedia.writeTones(surround, left: 440, right: 1000, layout: "5.1")
        let two = try kioskcam(["play", stereo, "--device", "alsa:null", "--quiet"])
        XCTAssertEqual(two.status, 0, two.stderr)
        XCTAssertTrue(two.stderr.contains("played 0:02.0 of \(stereo) from 0:00.0 on null, underruns: 0\n"), two.stderr)
        let six = try kioskcam(["play", surround, "--device", "alsa:null", "--quiet"])
        XCTAssertEqual(six.status, 0, six.stderr)
        XCTAssertTrue(six.stderr.contains("on null, underruns: 0, 6 channels folded to stereo"), six.stderr)
    }

    /// Keys from a real pseudo-terminal: space (typed before playback starts, so the race
    /// with the unpaced null device is won) pauses, q stops. Unpaused, the minute would
    /// play to its end at once.
    func testSpacePausesAndQStopsOnATerminal() throws {
        let folder = TemporaryDirectory()
        let sound = folder.path + "/minute.m4a"
        try Tool.run("/usr/bin/ffmpeg", ["-v", "error", "-y", "-f", "lavfi", "-i", "sine=frequency=440:sample_rate=48000:duration=60",
                                         "-c:a", "aac", sound])
        let terminalPath = try XCTUnwrap(Self.openPseudoTerminal(), "no pseudo-terminal: \(String(cString: strerror(errno)))")
        let master = terminalPath.master
        let terminal = open(terminalPath.path, O_RDWR | O_NOCTTY)
        XCTAssertGreaterThanOrEqual(terminal, 0)
        let masterHandle = FileHandle(fileDescriptor: master, closeOnDealloc: true)
        let typed = Data(" ".utf8)
        masterHandle.write(typed)

        let process = Process()
        process.executableURL = URL(fileURLWithPath: binary)
        process.arguments = ["play", sound, "--device", "alsa:null", "--volume", "0.5"]
        process.standardInput = FileHandle(fileDescriptor: terminal, closeOnDealloc: true)
        let errors = Pipe()
        process.standardError = errors
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        let stderr = ReadAll(errors.fileHandleForReading)
        Thread.sleep(forTimeInterval: 2)
        XCTAssertTrue(process.isRunning, "paused: the minute has not played out")
        masterHandle.write(Data("-q".utf8))
        let deadline = Date(timeIntervalSinceNow: 10)
        while process.isRunning && Date() < deadline { Thread.sleep(forTimeInterval: 0.05) }
        if process.isRunning { process.terminate() }
        process.waitUntilExit()
        let text = String(decoding: stderr.wait(), as: UTF8.self)
        XCTAssertEqual(process.terminationStatus, 0, text)
        XCTAssertTrue(text.contains(PlaybackKeys.help), text)
        XCTAssertTrue(text.contains("paused "), "the progress line says so: \(text)")
        XCTAssertTrue(text.contains("volume 40 %"), "- took the volume a tenth down: \(text)")
        XCTAssertTrue(text.contains("stopped after "), text)
        XCTAssertFalse(text.contains("stopped after 1:00.0"), text)
    }

    /// A new pseudo-terminal: its master descriptor and the terminal's path. Glibc's
    /// module leaves out the XSI pty calls (they need _XOPEN_SOURCE), so they are
    /// looked up in the C library.
    static func openPseudoTerminal() -> (master: Int32, path: String)? {
        typealias Call = @convention(c) (Int32) -> Int32
        typealias Name = @convention(c) (Int32) -> UnsafeMutablePointer<CChar>?
        guard let open = dlsym(nil, "posix_openpt"), let grant = dlsym(nil, "grantpt"),
              let unlock = dlsym(nil, "unlockpt"), let name = dlsym(nil, "ptsname") else { return nil }
        let master = unsafeBitCast(open, to: Call.self)(O_RDWR | O_NOCTTY)
        guard master >= 0 else { return nil }
        guard unsafeBitCast(grant, to: Call.self)(master) == 0, unsafeBitCast(unlock, to: Call.self)(master) == 0,
              let path = unsafeBitCast(name, to: Name.self)(master) else {
            close(master)
            return nil
        }
        return (master, String(cString: path))
    }

    func testAMissingDeviceNamesItAndTheFixAndExits69() throws {
        let folder = TemporaryDirectory()
        let files = try Self.makeFiles(in: folder)
        let started = Date()
        let result = try kioskcam(["play", files.tone, "--device", "alsa:hw:99,0"])
        XCTAssertEqual(result.status, 69, result.stderr)
        XCTAssertLessThan(Date().timeIntervalSince(started), 10, "no hang")
        XCTAssertTrue(result.stderr.contains("kioskcam: error: open for playback failed for hw:99,0"), result.stderr)
        XCTAssertTrue(result.stderr.contains("aplay -l") && result.stderr.contains("--device alsa:"), result.stderr)
    }

    func testBadFilesAndOptionsAreClearErrors() throws {
        let folder = TemporaryDirectory()
        let files = try Self.makeFiles(in: folder)

        let missing = try kioskcam(["play", folder.path + "/nothing.m4a", "--device", "alsa:null"])
        XCTAssertEqual(missing.status, 1)
        XCTAssertTrue(missing.stderr.contains("nothing.m4a does not exist"), missing.stderr)

        let silent = try kioskcam(["play", files.silent, "--device", "alsa:null"])
        XCTAssertEqual(silent.status, 1)
        XCTAssertTrue(silent.stderr.contains("no audio stream") && silent.stderr.contains("video h264"), silent.stderr)

        let text = folder.path + "/notes.txt"
        try Data("not sound".utf8).write(to: URL(fileURLWithPath: text))
        let notMedia = try kioskcam(["play", text, "--device", "alsa:null"])
        XCTAssertEqual(notMedia.status, 1)
        XCTAssertTrue(notMedia.stderr.contains("notes.txt"), notMedia.stderr)

        for (arguments, needle) in [
            (["--from", "soon"], "--from soon: use a time"),
            (["--from", "1:75"], "--from 1:75: use a time"),
            (["--from", "5s"], "--from 5s: \(files.tone) lasts only 0:02.0"),
            (["--from", "99999999999999999999"], "lasts only 0:02.0"),
            (["--volume", "1.5"], "--volume 1.5: use a number from 0"),
            (["--device", "hw:0,0"], "--device hw:0,0: use alsa:NAME"),
        ] {
            let result = try kioskcam(["play", files.tone] + arguments)
            XCTAssertEqual(result.status, 64, "\(arguments): \(result.stderr)")
            XCTAssertTrue(result.stderr.contains(needle), "\(arguments): \(result.stderr)")
        }
    }

    /// `--screen`: the touch screen's player onto a file-backed framebuffer, picture and
    /// sound; the picture is on the "panel" afterwards (screenshot), a picture-only file
    /// plays on the clock alone, and what --screen cannot do is a clear error.
    func testScreenPlaysThePictureOntoAFramebuffer() throws {
        let folder = TemporaryDirectory()
        let files = try Self.makeFiles(in: folder)
        let clip = folder.path + "/clip.mp4"
        try Tool.run("/usr/bin/ffmpeg", ["-v", "error", "-y", "-f", "lavfi", "-i", "testsrc2=size=640x360:rate=15:duration=2",
                                         "-f", "lavfi", "-i", "sine=frequency=1000:sample_rate=48000:duration=2",
                                         "-c:v", "libx264", "-preset", "ultrafast", "-pix_fmt", "yuv420p", "-c:a", "aac", clip])
        let screen = "file:" + folder.path + "/screen.fb"
        let started = Date()
        let played = try kioskcam(["play", clip, "--device", "alsa:null", "--screen", screen])
        let wall = Date().timeIntervalSince(started)
        XCTAssertEqual(played.status, 0, played.stderr)
        XCTAssertGreaterThan(wall, 1.8, "paced by the clock, not decoded as fast as possible")
        let counts = played.stderr.split(separator: "\n").first { $0.hasPrefix("played ") }
        let shown = counts.flatMap { line in line.range(of: ": ").map { Int(line[$0.upperBound...].prefix { $0.isNumber }) } } ?? nil
        XCTAssertGreaterThanOrEqual(shown ?? 0, 20, "of 30 pictures: \(played.stderr)")
        XCTAssertTrue(played.stderr.contains("on null and \(folder.path)/screen.fb"), played.stderr)
        XCTAssertTrue(played.stderr.contains("playing 0:0"), "the progress line: \(played.stderr)")

        // The last picture is on the panel: the middle of the picture area is not black.
        let shot = folder.path + "/shot.png"
        let taken = try kioskcam(["screenshot", "--framebuffer", screen, "-o", shot])
        XCTAssertEqual(taken.status, 0, taken.stderr)
        // The middle of the picture area scaled down to one grey pixel: its mean brightness.
        let mean = folder.path + "/mean.gray"
        try Tool.run("/usr/bin/ffmpeg", ["-v", "error", "-y", "-i", shot, "-vf", "crop=400:200:200:60,scale=1:1",
                                         "-f", "rawvideo", "-pix_fmt", "gray", mean])
        let luma = try XCTUnwrap(FileManager.default.contents(atPath: mean)?.first)
        XCTAssertGreaterThan(luma, 20, "a picture, not a black screen")

        // Picture only: the clock stands in for the sound card.
        let silent = try kioskcam(["play", files.silent, "--device", "alsa:null", "--screen", screen, "--quiet"])
        XCTAssertEqual(silent.status, 0, silent.stderr)
        XCTAssertTrue(silent.stderr.contains("played 0:00."), silent.stderr)

        for (arguments, needle) in [
            (["--screen", "auto"], "--screen auto: name the framebuffer"),
            (["--screen", screen, "--volume", "0.5"], "--volume works for sound only"),
        ] {
            let result = try kioskcam(["play", clip, "--device", "alsa:null"] + arguments)
            XCTAssertEqual(result.status, 64, "\(arguments): \(result.stderr)")
            XCTAssertTrue(result.stderr.contains(needle), "\(arguments): \(result.stderr)")
        }
        let absent = try kioskcam(["play", clip, "--device", "alsa:null", "--screen", folder.path + "/nothing/fb9"])
        XCTAssertNotEqual(absent.status, 0)
        XCTAssertTrue(absent.stderr.contains("nothing/fb9"), absent.stderr)
        let photo = folder.path + "/still.jpg"
        try Tool.run("/usr/bin/ffmpeg", ["-v", "error", "-y", "-f", "lavfi", "-i", "testsrc=size=160x120", "-frames:v", "1", photo])
        let still = try kioskcam(["play", photo, "--device", "alsa:null", "--screen", screen])
        XCTAssertEqual(still.status, 64, still.stderr)
        XCTAssertTrue(still.stderr.contains("is a photo"), still.stderr)
    }
}
