import Foundation
import KioskCore
@testable import KioskFramebuffer
@testable import KioskScreen
import KioskTestSupport
import XCTest

final class FramebufferFileTests: XCTestCase {
    func testHeaderRoundTripsAndRejectsGarbage() throws {
        let header = FramebufferFileHeader(size: ScreenSize(width: 801, height: 480), format: .rgb565)
        XCTAssertEqual(header.stride, 1616, "rows padded to 16 bytes")
        XCTAssertEqual(header.encoded.count, FramebufferFileHeader.encodedLength)
        XCTAssertEqual(FramebufferFileHeader(decoding: header.encoded), header)
        var broken = header.encoded
        broken[0] = UInt8(ascii: "X")
        XCTAssertNil(FramebufferFileHeader(decoding: broken))
        var narrow = header.encoded
        narrow[20] = 10; narrow[21] = 0  // stride 10 < 801 × 2
        XCTAssertNil(FramebufferFileHeader(decoding: narrow))
    }

    /// The daemon draws into the file; another open of it (as `kioskcam screenshot` does)
    /// sees the same picture, and a second daemon start replaces the file without
    /// disturbing a reader that still maps the old one.
    func testAReaderSeesWhatTheWriterDraws() throws {
        let folder = TemporaryDirectory("kioskcam-fb")
        let path = folder.path + "/screen.fb"
        let writer = try Framebuffer.createFile(path: path, size: ScreenSize(width: 800, height: 480), format: .xrgb8888)
        defer { writer.close() }
        let renderer = try ScreenRenderer(framebuffer: writer, rotation: .none)
        renderer.render(ScreenScenes.pinModel())
        let reader = try Framebuffer.openFile(path: path)
        XCTAssertFalse(reader.isWritable)
        XCTAssertEqual(reader.size, ScreenSize(width: 800, height: 480))
        XCTAssertEqual(reader.format, .xrgb8888)
        XCTAssertEqual(reader.logicalRGBA(rotation: .none), writer.logicalRGBA(rotation: .none))
        // A new frame shows up in the existing mapping.
        var model = ScreenScenes.pinModel()
        model.pinDigitsEntered = 3
        XCTAssertFalse(renderer.render(model).isEmpty)
        XCTAssertEqual(reader.logicalRGBA(rotation: .none), writer.logicalRGBA(rotation: .none))
        let before = reader.logicalRGBA(rotation: .none)
        let replacement = try Framebuffer.createFile(path: path, size: ScreenSize(width: 320, height: 240), format: .rgb565)
        XCTAssertEqual(reader.logicalRGBA(rotation: .none), before)
        replacement.close()
        reader.close()
        XCTAssertEqual(try Framebuffer.openFile(path: path).size, ScreenSize(width: 320, height: 240))
        XCTAssertThrowsError(try ScreenRenderer(framebuffer: Framebuffer.openFile(path: path), rotation: .none))
    }

    func testErrorsNameTheFileAndTheFix() throws {
        let folder = TemporaryDirectory("kioskcam-fb")
        XCTAssertThrowsError(try Framebuffer.openFile(path: folder.path + "/none.fb")) { error in
            let error = error as! ScreenError
            XCTAssertEqual(error.code, .notFound)
            XCTAssertTrue(error.description.contains("none.fb"), error.description)
            XCTAssertTrue(error.description.contains("start the daemon"), error.description)
        }
        let junk = folder.path + "/junk.fb"
        try Data(repeating: 7, count: 5000).write(to: URL(fileURLWithPath: junk))
        XCTAssertThrowsError(try Framebuffer.openFile(path: junk)) { error in
            XCTAssertEqual((error as! ScreenError).code, .notAFramebuffer)
        }
        // A regular file is not a framebuffer device.
        XCTAssertThrowsError(try Framebuffer.device(path: junk)) { error in
            XCTAssertEqual((error as! ScreenError).code, .notAFramebuffer, "\(error)")
        }
        XCTAssertThrowsError(try Framebuffer.device(path: "/dev/fb-none")) { error in
            XCTAssertEqual((error as! ScreenError).code, .notFound)
            XCTAssertTrue("\(error)".contains("ls /dev/fb"), "\(error)")
        }
    }

    func testConfiguredFramebufferFallsBackToAFileAndSaysSo() throws {
        let folder = TemporaryDirectory("kioskcam-fb")
        var config = Configuration()
        config.screen.framebuffer = .file(folder.path + "/a.fb")
        config.screen.virtualSize = ScreenSize(width: 640, height: 360)
        let file = try Framebuffer.open(config: config) { _ in }
        XCTAssertEqual(file.backing, .file(path: folder.path + "/a.fb"))
        XCTAssertEqual(file.size, ScreenSize(width: 640, height: 360))
        XCTAssertEqual(try Framebuffer.openForReading(config: config).size, file.size)
        file.close()

        config.screen.framebuffer = .memory
        var lines: [String] = []
        let memory = try Framebuffer.open(config: config) { lines.append($0) }
        XCTAssertEqual(memory.backing, .memory)
        XCTAssertEqual(lines.count, 1)
        XCTAssertThrowsError(try Framebuffer.openForReading(config: config))

        // "auto" without /dev/fb0 (this host has none): a file, and a log line saying so.
        guard !FileManager.default.fileExists(atPath: "/dev/fb0") else { return }
        config.screen.framebuffer = .automatic
        config.control.stateDirectory = folder.path
        lines = []
        let automatic = try Framebuffer.open(config: config) { lines.append($0) }
        defer { automatic.close() }
        guard case .file(let path) = automatic.backing else { return XCTFail("\(automatic.backing)") }
        XCTAssertTrue(Framebuffer.fileLocations(config: config).contains(path))
        XCTAssertTrue(lines.first?.contains("no /dev/fb0") == true, "\(lines)")
    }

    func testScreenConfiguration() throws {
        let text = """
        [screen]
        framebuffer = "/dev/fb1"
        rotation = 270
        virtual_size = "1024x600"
        preview_fps = 15
        playback_device = "hw:Loopback,0,0"
        """
        let config = try Configuration(toml: text)
        XCTAssertEqual(config.screen.framebuffer, .device("/dev/fb1"))
        XCTAssertEqual(config.screen.rotation, .threeQuarters)
        XCTAssertEqual(config.screen.virtualSize, ScreenSize(width: 1024, height: 600))
        XCTAssertEqual(config.screen.previewFramesPerSecond, 15)
        XCTAssertEqual(config.screen.playbackDevice, "hw:Loopback,0,0")
        XCTAssertEqual(try Configuration(toml: "").screen.playbackDevice, "default")
        XCTAssertEqual(try Configuration(toml: "[screen]\nframebuffer = \"file:/run/x.fb\"").screen.framebuffer, .file("/run/x.fb"))
        for bad in ["rotation = 45", "rotation = 360", "framebuffer = \"fb0\"", "virtual_size = \"10x10\"", "preview_fps = 0",
                    "playback_device = \"\"", "playback_device = \"hw:0 0\""] {
            XCTAssertThrowsError(try Configuration(toml: "[screen]\n" + bad), bad)
        }
    }
}
