import KioskCore
import XCTest

/// `clip.export` from the socket: only library recordings, only sane times and sizes,
/// and every refusal names the field.
final class ClipExportRequestTests: XCTestCase {
    func parse(_ arguments: String) -> Result<ControlCall, ControlParseFailure> {
        ControlCall.parse(#"{"v":1,"id":9,"cmd":"clip.export","args":"# + arguments + "}")
    }

    func testTheDocumentedShapeParses() throws {
        let call = try parse(#"{"file":"video/20261124/101455.mp4","from":1.5,"to":4}"#).get()
        XCTAssertEqual(call.request, .clipExport(ClipExportRequest(file: "video/20261124/101455.mp4", from: 1.5, to: 4)))
        let small = try parse(#"{"file":"video/20261124/101455.mp4","reencode":true,"size":"320x180","bitrate":300}"#).get()
        XCTAssertEqual(small.request, .clipExport(ClipExportRequest(file: "video/20261124/101455.mp4", reencode: true,
                                                                    size: FrameSize(width: 320, height: 180), bitrateKbps: 300)))
    }

    func testEveryBadFieldIsNamed() {
        let cases: [(String, String, String)] = [
            (#"{}"#, "file", "missing"),
            (#"{"file":"/etc/shadow"}"#, "file", "as list names it"),
            (#"{"file":"video/20261124/../../../etc/passwd"}"#, "file", "as list names it"),
            (#"{"file":"video/20261124/..mp4"}"#, "file", "as list names it"),
            (#"{"file":"photo/20261124/101455.jpg"}"#, "file", "as list names it"),
            (#"{"file":"video/2026112/101455.mp4"}"#, "file", "as list names it"),
            (#"{"file":"video/20261124/101455.m4a"}"#, "file", "as list names it"),
            (#"{"file":"video/20261124/101455.mp4/x"}"#, "file", "as list names it"),
            (#"{"file":"video/20261124/abc.mp4"}"#, "file", "as list names it"),
            (#"{"file":7}"#, "file", "as list names it"),
            (#"{"file":"video/20261124/101455.mp4","from":-1}"#, "from", "0.0 to 604800.0 seconds"),
            (#"{"file":"video/20261124/101455.mp4","to":1e300}"#, "to", "seconds"),
            (#"{"file":"video/20261124/101455.mp4","from":"1"}"#, "from", "number"),
            (#"{"file":"video/20261124/101455.mp4","from":3,"to":2}"#, "to", "after from"),
            (#"{"file":"video/20261124/101455.mp4","size":"640x360"}"#, "size", "reencode"),
            (#"{"file":"video/20261124/101455.mp4","bitrate":500}"#, "bitrate", "reencode"),
            (#"{"file":"video/20261124/101455.mp4","reencode":true,"size":"641x360"}"#, "size", "even WxH"),
            (#"{"file":"video/20261124/101455.mp4","reencode":true,"size":"99999x2"}"#, "size", "even WxH"),
            (#"{"file":"video/20261124/101455.mp4","reencode":true,"bitrate":10}"#, "bitrate", "kbit/s"),
            (#"{"file":"video/20261124/101455.mp4","reencode":true,"bitrate":500.5}"#, "bitrate", "whole"),
            (#"{"file":"video/20261124/101455.mp4","reencode":true,"wav":true}"#, "wav", "leave out reencode"),
            (#"{"file":"video/20261124/101455.mp4","output":"/tmp/x.mp4"}"#, "output", "unknown argument"),
        ]
        for (arguments, field, text) in cases {
            guard case .failure(let failure) = parse(arguments) else {
                XCTFail("\(arguments) parsed")
                continue
            }
            XCTAssertEqual(failure.id, 9)
            XCTAssertEqual(failure.error.code, .badArgument, arguments)
            XCTAssertTrue(failure.error.message.hasPrefix(field), "\(arguments): \(failure.error.message)")
            XCTAssertTrue(failure.error.message.contains(text), "\(arguments): \(failure.error.message)")
        }
    }

    func testRecordingPathsStayInsideTheLibrary() {
        let layout = LibraryLayout(root: "/var/lib/kioskcam/media/")
        XCTAssertEqual(layout.recordingPath(relative: "video/20261124/101455-motion.mp4"),
                       "/var/lib/kioskcam/media/video/20261124/101455-motion.mp4")
        XCTAssertEqual(layout.recordingPath(relative: "audio/20261124/101455-1.m4a"), "/var/lib/kioskcam/media/audio/20261124/101455-1.m4a")
        for bad in ["", "video", "video/20261124", "./video/20261124/101455.mp4", "video//101455.mp4", "video/20261124/101455.MP4",
                    "video/20261124/101455 .mp4", "video/20261124/101455..mp4", "video/20261332/101455.mp4",
                    "exports/tmp/101455.mp4", "video/20261124/" + String(repeating: "1", count: 70) + ".mp4"] {
            XCTAssertNil(layout.recordingPath(relative: bad), bad)
        }
        XCTAssertEqual(layout.exportsDirectory, "/var/lib/kioskcam/media/exports/tmp")
        XCTAssertEqual(LibraryLayout.exportName(relative: "video/20261124/101455.mp4", from: 1.5, to: 4, fileExtension: "mp4"),
                       "video-20261124-101455_1500-4000.mp4")
        XCTAssertEqual(LibraryLayout.exportName(relative: "audio/20261124/101455-1.m4a", from: 0, to: nil, fileExtension: "wav"),
                       "audio-20261124-101455-1_0-end.wav")
    }
}
