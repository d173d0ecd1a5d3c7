import Foundation
import KioskCore
import KioskMedia
import KioskTestSupport
import XCTest

/// Files are read only through the demuxer of the container they are: a playlist, a
/// stream or a picture under a recording's name is refused with what it is, and the
/// files kioskcam makes (and WAV) still open.
final class OwnContainerTests: XCTestCase {
    func testAnotherContainerUnderARecordingsNameIsRefusedNamingIt() throws {
        let folder = TemporaryDirectory()
        // An HLS playlist named .mp4 that lists a file: FFmpeg's probe would open it as HLS.
        let secret = folder.path + "/secret.ts", playlist = folder.path + "/101500.mp4"
        try TestMedia.writeHLSPlaylist(playlist, listing: secret)
        let sound = folder.path + "/101500.m4a"
        try FileManager.default.copyItem(atPath: secret, toPath: sound)

        XCTAssertThrowsError(try ClipCopy.outline(of: playlist)) { error in
            XCTAssertTrue("\(error)".contains("an HLS playlist, not an MP4, M4A or WAV file"), "\(error)")
        }
        XCTAssertThrowsError(try VideoFileDecoder(path: playlist)) { error in
            XCTAssertTrue("\(error)".contains("an HLS playlist"), "\(error)")
        }
        XCTAssertThrowsError(try AudioFileDecoder(path: sound)) { error in
            XCTAssertTrue("\(error)".contains("an MPEG transport stream"), "\(error)")
        }
        XCTAssertThrowsError(try MediaSalvage.inspect(sound)) { error in
            XCTAssertTrue("\(error)".contains("an MPEG transport stream"), "\(error)")
        }
        XCTAssertThrowsError(try ClipCopy.outline(of: folder.path + "/missing.mp4")) { error in
            XCTAssertTrue("\(error)".contains("Check the path"), "a missing file keeps its own hint: \(error)")
        }
    }

    func testTheFilesKioskcamMakesAndWAVStillOpen() throws {
        let folder = TemporaryDirectory()
        let mp4 = folder.path + "/a.mp4", m4a = folder.path + "/a.m4a", wav = folder.path + "/a.wav"
        try Tool.run("ffmpeg", ["-v", "error", "-f", "lavfi", "-i", "testsrc=size=64x64:rate=10:duration=1",
                                "-c:v", "libx264", "-movflags", "+frag_keyframe+empty_moov+default_base_moof", mp4])
        try Tool.run("ffmpeg", ["-v", "error", "-f", "lavfi", "-i", "sine=duration=1", "-c:a", "aac", m4a])
        try Tool.run("ffmpeg", ["-v", "error", "-f", "lavfi", "-i", "sine=duration=1", wav])
        XCTAssertTrue(try ClipCopy.outline(of: mp4).hasVideo)
        XCTAssertGreaterThan(try AudioFileDecoder(path: m4a).sampleRate, 0)
        XCTAssertGreaterThan(try AudioFileDecoder(path: wav).sampleRate, 0)
        XCTAssertGreaterThan(try MediaSalvage.inspect(mp4).packets, 0)
    }
}
