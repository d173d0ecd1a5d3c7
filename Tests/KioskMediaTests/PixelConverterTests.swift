import CAVCodec
import CAVUtil
import CSwScale
import Foundation
import KioskCore
import KioskTestSupport
import XCTest

@testable import KioskMedia

/// Real libswscale conversions from every camera layout, checked against the ffmpeg CLI's
/// own conversion of the same bytes to yuv420p — and, for the layouts FFmpeg has no name
/// for (YV12, VYUY, NV16, NV61), against its conversion of the layout they were made from.
final class PixelConverterTests: XCTestCase {
    let size = FrameSize(width: 64, height: 48)
    var folder: TemporaryDirectory!

    override func setUp() { folder = TemporaryDirectory("kioskcam-pixels") }
    override func tearDown() { folder = nil }

    // MARK: Making frames

    /// How the test makes a frame of a layout from an RGB24 picture.
    enum Recipe {
        /// ffmpeg writes these very bytes under this name.
        case ffmpeg(String)
        /// yuv420p with the chroma planes exchanged.
        case yv12
        /// uyvy422 with U and V exchanged.
        case vyuy
        /// yuv422p with its chroma planes interleaved, U first (NV16) or V first (NV61).
        case semiPlanar422(vFirst: Bool)
        /// The RGB24 picture sampled through a Bayer mosaic (ffmpeg cannot write Bayer);
        /// `pattern` names the colour of each 2×2 cell position, row by row.
        case bayer(ffmpegName: String, pattern: [Int])
    }

    func recipe(_ layout: PixelFormat) -> Recipe {
        switch layout {
        case .yuv420: .ffmpeg("yuv420p")
        case .nv12: .ffmpeg("nv12")
        case .yvu420: .yv12
        case .nv21: .ffmpeg("nv21")
        case .yuyv: .ffmpeg("yuyv422")
        case .uyvy: .ffmpeg("uyvy422")
        case .yvyu: .ffmpeg("yvyu422")
        case .vyuy: .vyuy
        case .nv16: .semiPlanar422(vFirst: false)
        case .nv61: .semiPlanar422(vFirst: true)
        case .yuv422p: .ffmpeg("yuv422p")
        case .grey: .ffmpeg("gray")
        case .rgb24: .ffmpeg("rgb24")
        case .bgr24: .ffmpeg("bgr24")
        case .rgb565: .ffmpeg("rgb565le")
        case .rgb565x: .ffmpeg("rgb565be")
        // Alpha layouts get a real alpha byte (ffmpeg writes 255) that must not matter.
        case .abgr32: .ffmpeg("bgra")
        case .xbgr32, .bgr32: .ffmpeg("bgr0")
        case .rgba32: .ffmpeg("rgba")
        case .rgbx32: .ffmpeg("rgb0")
        case .argb32: .ffmpeg("argb")
        case .xrgb32, .rgb32: .ffmpeg("0rgb")
        case .bgra32: .ffmpeg("abgr")
        case .bgrx32: .ffmpeg("0bgr")
        // Colour channel per position: 0 red, 1 green, 2 blue.
        case .sbggr8: .bayer(ffmpegName: "bayer_bggr8", pattern: [2, 1, 1, 0])
        case .sgbrg8: .bayer(ffmpegName: "bayer_gbrg8", pattern: [1, 2, 0, 1])
        case .sgrbg8: .bayer(ffmpegName: "bayer_grbg8", pattern: [1, 0, 2, 1])
        case .srggb8: .bayer(ffmpegName: "bayer_rggb8", pattern: [0, 1, 1, 2])
        }
    }

    /// ffmpeg's conversion of one raw frame.
    func ffmpeg(_ bytes: [UInt8], from: String, to: String, size: FrameSize? = nil) throws -> [UInt8] {
        let input = folder.path + "/in-\(UUID().uuidString.prefix(6)).raw"
        let output = folder.path + "/out-\(UUID().uuidString.prefix(6)).raw"
        try Data(bytes).write(to: URL(fileURLWithPath: input))
        try Tool.run("ffmpeg", ["-v", "error", "-f", "rawvideo", "-pix_fmt", from, "-s", (size ?? self.size).description,
                                "-i", input, "-frames:v", "1", "-pix_fmt", to, "-f", "rawvideo", "-y", output])
        return try [UInt8](Data(contentsOf: URL(fileURLWithPath: output)))
    }

    /// ffmpeg's testsrc2 (colour bars, gradients, text) as one RGB24 frame.
    func testSourceRGB24() throws -> [UInt8] {
        let output = folder.path + "/testsrc2.rgb"
        try Tool.run("ffmpeg", ["-v", "error", "-f", "lavfi", "-i", "testsrc2=size=\(size):rate=30", "-frames:v", "1",
                                "-pix_fmt", "rgb24", "-f", "rawvideo", "-y", output])
        return try [UInt8](Data(contentsOf: URL(fileURLWithPath: output)))
    }

    /// The left half pure red, the right half pure blue.
    func redBlueRGB24() -> [UInt8] {
        var bytes: [UInt8] = []
        for _ in 0..<size.height {
            for x in 0..<size.width { bytes += x < size.width / 2 ? [255, 0, 0] : [0, 0, 255] }
        }
        return bytes
    }

    /// Frames already made, by layout and picture: each takes a few ffmpeg runs, and three
    /// tests use the same ones (tests run one at a time).
    nonisolated(unsafe) static var made: [String: (bytes: [UInt8], reference: [UInt8])] = [:]

    /// A frame of `layout` made from `rgb`, and the ffmpeg CLI's yuv420p of it.
    func frame(_ layout: PixelFormat, from rgb: [UInt8]) throws -> (bytes: [UInt8], reference: [UInt8]) {
        let key = "\(layout.rawValue) \(rgb.hashValue)"
        if let made = Self.made[key] { return made }
        let made = try makeFrame(layout, from: rgb)
        Self.made[key] = made
        return made
    }

    func makeFrame(_ layout: PixelFormat, from rgb: [UInt8]) throws -> (bytes: [UInt8], reference: [UInt8]) {
        let w = size.width, h = size.height
        switch recipe(layout) {
        case .ffmpeg(let name):
            let bytes = try ffmpeg(rgb, from: "rgb24", to: name)
            return (bytes, try ffmpeg(bytes, from: name, to: "yuv420p"))
        case .yv12:
            let yuv = try ffmpeg(rgb, from: "rgb24", to: "yuv420p")
            let luma = w * h, chroma = luma / 4
            return (Array(yuv[..<luma] + yuv[(luma + chroma)...] + yuv[luma..<(luma + chroma)]), yuv)
        case .vyuy:
            var bytes = try ffmpeg(rgb, from: "rgb24", to: "uyvy422")
            let reference = try ffmpeg(bytes, from: "uyvy422", to: "yuv420p")
            for group in stride(from: 0, to: bytes.count, by: 4) { bytes.swapAt(group, group + 2) }
            return (bytes, reference)
        case .semiPlanar422(let vFirst):
            let planar = try ffmpeg(rgb, from: "rgb24", to: "yuv422p")
            let luma = w * h, chroma = luma / 2
            let u = planar[luma..<(luma + chroma)], v = planar[(luma + chroma)...]
            var bytes = Array(planar[..<luma])
            for (first, second) in vFirst ? zip(v, u) : zip(u, v) { bytes += [first, second] }
            return (bytes, try ffmpeg(planar, from: "yuv422p", to: "yuv420p"))
        case .bayer(let name, let pattern):
            var bytes: [UInt8] = []
            for y in 0..<h {
                for x in 0..<w { bytes.append(rgb[(y * w + x) * 3 + pattern[(y % 2) * 2 + x % 2]]) }
            }
            // Demosaiced to RGB24 first, as `PixelConverter` does (see `demosaicsFirst`).
            return (bytes, try ffmpeg(try ffmpeg(bytes, from: name, to: "rgb24"), from: "rgb24", to: "yuv420p"))
        }
    }

    /// Our conversion of `bytes` to yuv420p.
    func convert(_ bytes: [UInt8], _ layout: PixelFormat, to destination: AVPixelFormat = AV_PIX_FMT_YUV420P,
                 size destinationSize: FrameSize? = nil) throws -> [UInt8] {
        let source = VideoFormat(size: size, pixelFormat: layout, framesPerSecond: 30)
        let outputSize = destinationSize ?? size
        XCTAssertEqual(bytes.count, layout.frameByteCount(size), "\(layout): the test made a frame of the wrong size")
        let converter = try PixelConverter(source: source, destinationSize: outputSize, destinationFormat: destination)
        let picture = try Frame.picture(size: outputSize, format: destination, operation: "test")
        bytes.withUnsafeBytes { converter.convert($0.baseAddress!, into: picture.pointer) }
        // Read the planes back tightly packed.
        let count = Int(av_image_get_buffer_size(destination, Int32(outputSize.width), Int32(outputSize.height), 1))
        var packed = [UInt8](repeating: 0, count: count)
        let frame = picture.pointer
        let copied = withUnsafePointer(to: &frame.pointee.data) { data in
            withUnsafePointer(to: &frame.pointee.linesize) { linesize in
                data.withMemoryRebound(to: UnsafePointer<UInt8>?.self, capacity: 8) { data in
                    linesize.withMemoryRebound(to: Int32.self, capacity: 8) { linesize in
                        av_image_copy_to_buffer(&packed, Int32(count), data, linesize, destination,
                                                Int32(outputSize.width), Int32(outputSize.height), 1)
                    }
                }
            }
        }
        XCTAssertEqual(Int(copied), count)
        return packed
    }

    // MARK: Comparing frames

    /// Peak signal-to-noise ratio of one plane in dB (infinity when identical).
    func psnr(_ a: ArraySlice<UInt8>, _ b: ArraySlice<UInt8>) -> Double {
        let squares = zip(a, b).reduce(0.0) { $0 + pow(Double(Int($1.0) - Int($1.1)), 2) }
        guard squares > 0 else { return .infinity }
        return 10 * log10(255 * 255 / (squares / Double(a.count)))
    }

    /// Y, U and V planes of a tightly packed yuv420p frame of `size`.
    func planes(_ frame: [UInt8]) -> [ArraySlice<UInt8>] {
        let luma = size.pixelCount, chroma = luma / 4
        return [frame[0..<luma], frame[luma..<(luma + chroma)], frame[(luma + chroma)..<(luma + 2 * chroma)]]
    }

    /// The mean of a chroma plane over the middle of the left or right half (away from the edge).
    func chromaMean(_ plane: ArraySlice<UInt8>, left: Bool) -> Double {
        let cw = size.width / 2, ch = size.height / 2
        let columns = left ? 2..<(cw / 2 - 2) : (cw / 2 + 2)..<(cw - 2)
        var sum = 0, count = 0
        for y in 2..<(ch - 2) {
            for x in columns {
                sum += Int(plane[plane.startIndex + y * cw + x])
                count += 1
            }
        }
        return Double(sum) / Double(count)
    }

    func format(_ layout: PixelFormat, is sampling: PixelGeometry.Sampling) -> Bool {
        layout.geometry.sampling == sampling
    }

    // MARK: Tests

    /// Every layout is something libswscale 6 reads, and its geometry is FFmpeg's.
    func testEveryLayoutIsAnInputLibswscaleTakesWithFFmpegsGeometry() {
        for layout in PixelFormat.allCases {
            let reading = layout.swscaleReading
            XCTAssertGreaterThan(sws_isSupportedInput(reading.format), 0, "\(layout) read as \(reading.format.name)")
            // The bytes of the layout itself, by the FFmpeg format with the same geometry.
            let twin: AVPixelFormat
            switch recipe(layout) {
            case .ffmpeg(let name): twin = av_get_pix_fmt(name)
            case .yv12: twin = AV_PIX_FMT_YUV420P
            case .vyuy: twin = AV_PIX_FMT_UYVY422
            case .semiPlanar422: twin = AV_PIX_FMT_NV16
            case .bayer(let name, _): twin = av_get_pix_fmt(name)
            }
            XCTAssertNotEqual(twin, AV_PIX_FMT_NONE, "\(layout)")
            for frame in [size, FrameSize(width: 7, height: 5), FrameSize(width: 1280, height: 720), FrameSize(width: 2, height: 1)] {
                XCTAssertEqual(layout.frameByteCount(frame),
                               Int(av_image_get_buffer_size(twin, Int32(frame.width), Int32(frame.height), 1)),
                               "\(layout) \(frame) vs FFmpeg's \(twin.name)")
            }
        }
    }

    /// ffmpeg's testsrc2 through every layout: our yuv420p matches the ffmpeg CLI's.
    func testEveryLayoutConvertsLikeFFmpeg() throws {
        let rgb = try testSourceRGB24()
        for layout in PixelFormat.allCases {
            let (bytes, reference) = try frame(layout, from: rgb)
            let ours = try convert(bytes, layout)
            XCTAssertEqual(ours.count, reference.count, "\(layout)")
            guard ours.count == reference.count else { continue }
            let scores = zip(planes(ours), planes(reference)).map { psnr($0, $1) }
            // NV16/NV61 keep every other chroma row where ffmpeg filters 4:2:2 down to 4:2:0
            // (libswscale cannot read them): a difference only at sharp colour edges (38 dB
            // here). BGR3 takes libswscale's special case, which averages each 2×2 block of
            // chroma where the CLI's filter chain interpolates (40 dB).
            // Bayer: the CLI's scale filter demosaics some rows differently (96 % of its
            // RGB24 bytes equal ours), which a picture of sharp edges shows (33–45 dB).
            let isBayer = format(layout, is: .bayer)
            let chromaFloor = isBayer ? 30 : [.nv16, .nv61, .bgr24].contains(layout) ? 35.0 : 45.0
            XCTAssertGreaterThan(scores[0], isBayer ? 30 : 45, "\(layout) Y PSNR \(scores)")
            XCTAssertGreaterThan(scores[1], chromaFloor, "\(layout) U PSNR \(scores)")
            XCTAssertGreaterThan(scores[2], chromaFloor, "\(layout) V PSNR \(scores)")
        }
    }

    /// Red stays red and blue stays blue in every layout — a U/V mix-up (the YV12, VYUY,
    /// NV21, NV61 tricks) would turn one into the other.
    func testRedAndBlueStayPutInEveryLayout() throws {
        let rgb = redBlueRGB24()
        let reference = planes(try ffmpeg(rgb, from: "rgb24", to: "yuv420p"))
        // BT.601 limited range: red U 90 V 240, blue U 240 V 110.
        XCTAssertEqual(chromaMean(reference[1], left: true), 90, accuracy: 2)
        XCTAssertEqual(chromaMean(reference[2], left: true), 240, accuracy: 2)
        XCTAssertEqual(chromaMean(reference[1], left: false), 240, accuracy: 2)
        XCTAssertEqual(chromaMean(reference[2], left: false), 110, accuracy: 2)
        for layout in PixelFormat.allCases {
            let (bytes, _) = try frame(layout, from: rgb)
            let ours = planes(try convert(bytes, layout))
            for (plane, name) in [(1, "U"), (2, "V")] {
                for left in [true, false] {
                    let expected = layout == .grey ? 128 : chromaMean(reference[plane], left: left)
                    XCTAssertEqual(chromaMean(ours[plane], left: left), expected, accuracy: 3,
                                   "\(layout) \(name) of the \(left ? "red" : "blue") half")
                }
            }
            let lumaExpected = layout == .grey ? nil : reference[0]
            if let lumaExpected {
                XCTAssertGreaterThan(psnr(ours[0], lumaExpected), 30, "\(layout) Y")
            }
        }
    }

    /// The preview path: every layout into BGRA, scaled — VYUY through its yuv422p step.
    func testEveryLayoutScalesIntoBGRA() throws {
        let rgb = redBlueRGB24()
        let half = FrameSize(width: 32, height: 24)
        for layout in PixelFormat.allCases {
            let (bytes, _) = try frame(layout, from: rgb)
            let bgra = try convert(bytes, layout, to: AV_PIX_FMT_BGRA, size: half)
            XCTAssertEqual(bgra.count, half.pixelCount * 4)
            func pixel(_ x: Int, _ y: Int) -> [Int] {
                let i = (y * half.width + x) * 4
                return [Int(bgra[i + 2]), Int(bgra[i + 1]), Int(bgra[i])]  // R, G, B
            }
            let left = pixel(6, 12), right = pixel(26, 12)
            if layout == .grey {
                XCTAssertEqual(left[0], left[2], accuracy: 2, "\(layout): grey has no colour")
                continue
            }
            XCTAssertGreaterThan(left[0], 200, "\(layout) left should be red: \(left)")
            XCTAssertLessThan(left[2], 60, "\(layout) left should be red: \(left)")
            XCTAssertGreaterThan(right[2], 200, "\(layout) right should be blue: \(right)")
            XCTAssertLessThan(right[0], 60, "\(layout) right should be blue: \(right)")
        }
    }

    /// The encoder gets 4:2:0 only: the camera's own layout when it is 4:2:0 and the
    /// encoder lists it, planar 4:2:0 otherwise — never libx264's 4:2:2 or grey.
    func testTheEncoderTakesOnly420() throws {
        let x264 = try XCTUnwrap(avcodec_find_encoder_by_name("libx264"))
        let expected: [PixelFormat: AVPixelFormat] = [
            .yuv420: AV_PIX_FMT_YUV420P, .yvu420: AV_PIX_FMT_YUV420P, .nv12: AV_PIX_FMT_NV12, .nv21: AV_PIX_FMT_NV21,
            .nv16: AV_PIX_FMT_NV12, .nv61: AV_PIX_FMT_NV21,
        ]
        for layout in PixelFormat.allCases {
            let chosen = LibavVideoEncoder.choosePixelFormat(x264, for: layout)
            XCTAssertEqual(chosen, expected[layout] ?? AV_PIX_FMT_YUV420P, "\(layout): \(chosen.name)")
        }
    }

    /// A layout whose bytes the encoder takes as they are costs one plane copy, and the
    /// copy honours the reading's tricks (YV12's plane order, NV16's row step).
    func testPlaneCopyPathsKeepTheTricks() throws {
        let rgb = try testSourceRGB24()
        for (layout, destination) in [(PixelFormat.yvu420, AV_PIX_FMT_YUV420P), (.nv16, AV_PIX_FMT_NV12), (.nv21, AV_PIX_FMT_NV21)] {
            let (bytes, reference) = try frame(layout, from: rgb)
            let copied = try convert(bytes, layout, to: destination)
            let asYUV420 = destination == AV_PIX_FMT_YUV420P ? copied : try ffmpeg(copied, from: destination.name, to: "yuv420p")
            let scores = zip(planes(asYUV420), planes(reference)).map { psnr($0, $1) }
            XCTAssertGreaterThan(scores.min() ?? 0, layout == .nv16 ? 25 : 45, "\(layout) via \(destination.name): \(scores)")
        }
    }

    /// Why Bayer is demosaiced to RGB24 first: libswscale 6 turns a pure red Bayer frame
    /// straight into yuv420p as Y 40, U 109 (red is Y 81, U 90). When this fails, FFmpeg has
    /// fixed its direct path and `demosaicsFirst` can go.
    func testLibswscaleDirectBayerPathIsStillWrong() throws {
        let redOnly = [UInt8]((0..<size.pixelCount).map { ($0 / size.width) % 2 == 1 && $0 % 2 == 1 ? 255 : 0 })  // BGGR: R at odd row, odd column
        let direct = try XCTUnwrap(sws_getContext(Int32(size.width), Int32(size.height), AV_PIX_FMT_BAYER_BGGR8,
                                                  Int32(size.width), Int32(size.height), AV_PIX_FMT_YUV420P,
                                                  kc_sws_bicubic(), nil, nil, nil))
        defer { sws_freeContext(direct) }
        let picture = try Frame.picture(size: size, format: AV_PIX_FMT_YUV420P, operation: "test")
        redOnly.withUnsafeBufferPointer { bytes in
            var planes: [UnsafePointer<UInt8>?] = [bytes.baseAddress, nil, nil, nil]
            var strides: [Int32] = [Int32(size.width), 0, 0, 0]
            withUnsafePointer(to: &picture.pointer.pointee.data) { data in
                withUnsafePointer(to: &picture.pointer.pointee.linesize) { linesize in
                    data.withMemoryRebound(to: UnsafeMutablePointer<UInt8>?.self, capacity: 8) { data in
                        linesize.withMemoryRebound(to: Int32.self, capacity: 8) { linesize in
                            _ = sws_scale(direct, &planes, &strides, 0, Int32(size.height), data, linesize)
                        }
                    }
                }
            }
        }
        let middle = Int(picture.pointer.pointee.linesize.0) * 20 + 20
        XCTAssertEqual(picture.pointer.pointee.data.0?[middle], 40, "libswscale's direct path: red's luma")
        // The way kioskcam converts it: right.
        let ours = planes(try convert(redOnly, .sbggr8))
        XCTAssertEqual(Int(ours[0][20 * size.width + 20]), 81, accuracy: 1)
        XCTAssertEqual(chromaMean(ours[1], left: true), 90, accuracy: 1)
        XCTAssertEqual(chromaMean(ours[2], left: true), 240, accuracy: 1)
    }

    /// GREY is full-range luma, as vivid delivers it (black 0, 75 % white 189) and as
    /// libswscale's gray8 takes it: squeezed into the recording's 16–235, and shown on the
    /// screen as it is, scaled or not.
    func testGreyIsFullRangeLuma() throws {
        let grey = [UInt8]((0..<size.pixelCount).map { $0 % size.width < size.width / 2 ? 255 : 0 })
        let yuv = try convert(grey, .grey)
        XCTAssertEqual(yuv[size.width * 10 + 4], 235)
        XCTAssertEqual(yuv[size.width * 10 + size.width - 4], 16)
        XCTAssertTrue(yuv[size.pixelCount...].allSatisfy { $0 == 128 })
        for screen in [size, FrameSize(width: 32, height: 24)] {
            let bgra = try convert(grey, .grey, to: AV_PIX_FMT_BGRA, size: screen)
            let row = 4 * screen.width * (screen.height / 2)
            let white = bgra[(row + 4 * 4)..<(row + 4 * 4 + 3)], black = bgra[(row + 4 * (screen.width - 4))..<(row + 4 * (screen.width - 4) + 3)]
            XCTAssertTrue(white.allSatisfy { $0 >= 252 }, "\(screen): \(Array(white))")
            XCTAssertTrue(black.allSatisfy { $0 <= 3 }, "\(screen): \(Array(black))")
        }
    }

    func testUnknownDestinationIsAClearError() {
        let source = VideoFormat(size: size, pixelFormat: .sbggr8, framesPerSecond: 30)
        XCTAssertThrowsError(try PixelConverter(source: source, destinationSize: size, destinationFormat: AV_PIX_FMT_BAYER_RGGB8)) { error in
            XCTAssertTrue("\(error)".contains("bayer_rggb8"), "\(error)")
        }
    }
}
