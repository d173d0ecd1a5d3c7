import Foundation
import XCTest
@testable import KioskCore

/// Reads one pixel's Y, Cb and Cr from a tightly packed frame, per layout.
private func pixel(_ frame: [UInt8], _ format: VideoFormat, x: Int, y: Int) -> YCbCr {
    let w = format.size.width, h = format.size.height
    let cw = (w + 1) / 2, ch = (h + 1) / 2
    switch format.pixelFormat {
    case .yuyv:
        let pair = y * w * 2 + (x & ~1) * 2
        return YCbCr(y: frame[pair + (x & 1) * 2], cb: frame[pair + 1], cr: frame[pair + 3])
    case .uyvy:
        let pair = y * w * 2 + (x & ~1) * 2
        return YCbCr(y: frame[pair + 1 + (x & 1) * 2], cb: frame[pair], cr: frame[pair + 2])
    case .yuv420:
        let c = (y / 2) * cw + x / 2
        return YCbCr(y: frame[y * w + x], cb: frame[w * h + c], cr: frame[w * h + cw * ch + c])
    case .nv12:
        let c = w * h + (y / 2) * cw * 2 + (x / 2) * 2
        return YCbCr(y: frame[y * w + x], cb: frame[c], cr: frame[c + 1])
    default:
        preconditionFailure("the test pattern is not drawn in \(format.pixelFormat)")
    }
}

/// BT.601 limited range from full-range 8-bit RGB, in floating point.
private func bt601(_ r: Double, _ g: Double, _ b: Double) -> (y: Double, cb: Double, cr: Double) {
    (16 + (65.481 * r + 128.553 * g + 24.966 * b) / 255,
     128 + (-37.797 * r - 74.203 * g + 112.0 * b) / 255,
     128 + (112.0 * r - 93.786 * g - 18.214 * b) / 255)
}

final class TestPatternRendererTests: XCTestCase {
    private let size = FrameSize(width: 320, height: 240)
    private let caption = Array("2026-03-07 09:05:04".utf8)
    /// The bars, left to right, as RGB.
    private let bars: [(Int, Int, Int)] = [
        (191, 191, 191), (191, 191, 0), (0, 191, 191), (0, 191, 0),
        (191, 0, 191), (191, 0, 0), (0, 0, 191), (16, 16, 16),
    ]

    private func render(_ renderer: TestPatternRenderer, sequence: Int, fill: UInt8 = 0, extra: Int = 0) -> [UInt8] {
        var bytes = [UInt8](repeating: fill, count: renderer.format.frameByteCount + extra)
        bytes.withUnsafeMutableBytes { renderer.render(into: $0, sequence: sequence, caption: caption) }
        return bytes
    }

    // MARK: Layout and size

    func testFrameByteCounts() {
        XCTAssertEqual(PixelFormat.yuyv.frameByteCount(size), 153_600)
        XCTAssertEqual(PixelFormat.uyvy.frameByteCount(size), 153_600)
        XCTAssertEqual(PixelFormat.yuv420.frameByteCount(size), 115_200)
        XCTAssertEqual(PixelFormat.nv12.frameByteCount(size), 115_200)
        // Odd sizes round chroma up.
        XCTAssertEqual(PixelFormat.yuv420.frameByteCount(FrameSize(width: 3, height: 3)), 9 + 2 * 4)
    }

    func testRenderWritesExactlyFrameByteCountBytes() {
        for format in TestPatternRenderer.layouts {
            let renderer = TestPatternRenderer(format: VideoFormat(size: size, pixelFormat: format, framesPerSecond: 30))
            let count = renderer.format.frameByteCount
            let zeros = render(renderer, sequence: 5, fill: 0x00, extra: 64)
            let ones = render(renderer, sequence: 5, fill: 0xFF, extra: 64)
            // Whatever was in the buffer before, every byte of the frame was written…
            XCTAssertEqual(zeros[..<count], ones[..<count], "\(format): some frame bytes kept the old contents")
            // …and not one byte after it.
            XCTAssertEqual(Array(zeros[count...]), [UInt8](repeating: 0x00, count: 64), "\(format) wrote past the frame")
            XCTAssertEqual(Array(ones[count...]), [UInt8](repeating: 0xFF, count: 64), "\(format) wrote past the frame")
        }
    }

    func testLayoutsItDoesNotDrawBecomeYUYV() {
        for format in PixelFormat.allCases where !TestPatternRenderer.layouts.contains(format) {
            let renderer = TestPatternRenderer(format: VideoFormat(size: size, pixelFormat: format, framesPerSecond: 25))
            XCTAssertEqual(renderer.format, VideoFormat(size: size, pixelFormat: .yuyv, framesPerSecond: 25), "\(format)")
        }
    }

    /// The burned-in clock (camera.test_clock) reads back from the luma, at the sizes a
    /// latency run uses and the smallest; a pattern without it reads as no clock.
    func testTheClockStripReadsBackAndIsAbsentByDefault() {
        for (width, height) in [(1280, 720), (320, 180), (1920, 1080)] {
            let renderer = TestPatternRenderer(format: VideoFormat(size: FrameSize(width: width, height: height), pixelFormat: .yuv420,
                                                                   framesPerSecond: 30))
            let strip = renderer.clockStrip
            XCTAssertGreaterThanOrEqual(strip.block, 4)
            XCTAssertLessThanOrEqual(strip.x + strip.count * strip.block, width)
            for value: UInt32 in [0, 1, 0xABCDEF, 0xFFFFFF, 8_388_608] {
                var bytes = [UInt8](repeating: 0, count: renderer.format.frameByteCount)
                bytes.withUnsafeMutableBytes { renderer.render(into: $0, sequence: 7, caption: caption, clockMilliseconds: value) }
                XCTAssertEqual(bytes.withUnsafeBytes { renderer.readClock(luma: $0) }, value, "\(width)x\(height)")
            }
            var plain = [UInt8](repeating: 0, count: renderer.format.frameByteCount)
            plain.withUnsafeMutableBytes { renderer.render(into: $0, sequence: 7, caption: caption) }
            XCTAssertNil(plain.withUnsafeBytes { renderer.readClock(luma: $0) }, "no clock unless asked")
        }
    }

    func testTooSmallBufferIsLeftAlone() {
        let renderer = TestPatternRenderer(format: VideoFormat(size: size, pixelFormat: .yuyv, framesPerSecond: 30))
        var bytes = [UInt8](repeating: 0xAB, count: renderer.format.frameByteCount - 1)
        bytes.withUnsafeMutableBytes { renderer.render(into: $0, sequence: 0, caption: caption) }
        XCTAssertTrue(bytes.allSatisfy { $0 == 0xAB })
    }

    /// The background is copied row by row from two-row strips: it must be the very
    /// picture of the bars filled over the whole frame with the band on top, in every
    /// layout, at odd heights (a 4:2:0 chroma row shared by a bar row and a band row)
    /// and when the band is taller than the frame.
    func testBackgroundRowsAreTheBarsAndBandDrawnWhole() {
        let sizes = [size, FrameSize(width: 1280, height: 720), FrameSize(width: 64, height: 121),
                     FrameSize(width: 16, height: 8), FrameSize(width: 30, height: 13)]
        for layout in TestPatternRenderer.layouts {
            for size in sizes {
                let renderer = TestPatternRenderer(format: VideoFormat(size: size, pixelFormat: layout, framesPerSecond: 30))
                let format = renderer.format
                var expected = [UInt8](repeating: 0x55, count: format.frameByteCount)
                expected.withUnsafeMutableBytes { raw in
                    var canvas = YCbCrCanvas(base: raw.baseAddress!, format: format)
                    let barWidth = (size.width + bars.count - 1) / bars.count
                    for (index, bar) in bars.enumerated() {
                        canvas.fill(x: index * barWidth, y: 0, width: barWidth, height: size.height,
                                    YCbCr(red: bar.0, green: bar.1, blue: bar.2))
                    }
                    let band = 12 * max(1, size.height / 120)
                    canvas.fill(x: 0, y: size.height - band, width: size.width, height: band, .black)
                }
                var drawn = [UInt8](repeating: 0xAA, count: format.frameByteCount)
                drawn.withUnsafeMutableBytes { renderer.renderBackground(into: $0.baseAddress!) }
                XCTAssertEqual(drawn, expected, "\(layout) \(size.width)x\(size.height)")
            }
        }
    }

    // MARK: Colours at the right offsets

    func testTopLeftPixelIsTheFirstBarAtTheLayoutsOffsets() {
        // RGB 191,191,191 → Y 180, Cb 128, Cr 128 (BT.601 limited range).
        let grey = YCbCr(red: 191, green: 191, blue: 191)
        XCTAssertEqual(grey, YCbCr(y: 180, cb: 128, cr: 128))
        let w = size.width, h = size.height
        for format in TestPatternRenderer.layouts {
            let renderer = TestPatternRenderer(format: VideoFormat(size: size, pixelFormat: format, framesPerSecond: 30))
            let f = render(renderer, sequence: 0)
            switch format {
            case .yuyv:
                XCTAssertEqual([f[0], f[1], f[2], f[3]], [180, 128, 180, 128])
            case .uyvy:
                XCTAssertEqual([f[0], f[1], f[2], f[3]], [128, 180, 128, 180])
            case .yuv420:
                XCTAssertEqual(f[0], 180)
                XCTAssertEqual(f[w * h], 128)
                XCTAssertEqual(f[w * h + w * h / 4], 128)
            case .nv12:
                XCTAssertEqual(f[0], 180)
                XCTAssertEqual(f[w * h], 128)
                XCTAssertEqual(f[w * h + 1], 128)
            default:
                XCTFail("\(format) is not drawn")
            }
        }
    }

    func testSecondBarDistinguishesCbFromCr() {
        // Yellow 191,191,0 has Cb well below and Cr above 128, so swapped offsets would show.
        let c = YCbCr(red: 191, green: 191, blue: 0)
        XCTAssertEqual(c.y, 161)
        XCTAssertLessThan(c.cb, 50)      // BT.601: 44.1
        XCTAssertGreaterThan(c.cr, 135)  // BT.601: 141.5
        let w = size.width, h = size.height
        let x = 40  // first column of the second bar (320 / 8)
        for format in TestPatternRenderer.layouts {
            let renderer = TestPatternRenderer(format: VideoFormat(size: size, pixelFormat: format, framesPerSecond: 30))
            let f = render(renderer, sequence: 0)
            switch format {
            case .yuyv:
                XCTAssertEqual([f[2 * x], f[2 * x + 1], f[2 * x + 2], f[2 * x + 3]], [c.y, c.cb, c.y, c.cr])
            case .uyvy:
                XCTAssertEqual([f[2 * x], f[2 * x + 1], f[2 * x + 2], f[2 * x + 3]], [c.cb, c.y, c.cr, c.y])
            case .yuv420:
                XCTAssertEqual(f[x], c.y)
                XCTAssertEqual(f[w * h + x / 2], c.cb)
                XCTAssertEqual(f[w * h + w * h / 4 + x / 2], c.cr)
            case .nv12:
                XCTAssertEqual(f[x], c.y)
                XCTAssertEqual(f[w * h + x], c.cb)
                XCTAssertEqual(f[w * h + x + 1], c.cr)
            default:
                XCTFail("\(format) is not drawn")
            }
        }
    }

    func testEveryBarHasItsColourAcrossItsWidth() {
        for format in TestPatternRenderer.layouts {
            let vf = VideoFormat(size: size, pixelFormat: format, framesPerSecond: 30)
            let f = render(TestPatternRenderer(format: vf), sequence: 0)
            for (index, rgb) in bars.enumerated() {
                let expected = YCbCr(red: rgb.0, green: rgb.1, blue: rgb.2)
                for x in [index * 40, index * 40 + 19, index * 40 + 39] {
                    for y in [0, 1, 50, 95, 180] {
                        XCTAssertEqual(pixel(f, vf, x: x, y: y), expected, "\(format) bar \(index) at (\(x), \(y))")
                    }
                }
            }
            // The dark band at the bottom, right of the caption.
            XCTAssertEqual(pixel(f, vf, x: 318, y: 239), .black, "\(format)")
            XCTAssertEqual(pixel(f, vf, x: 300, y: 220), .black, "\(format)")
        }
    }

    // MARK: Motion

    func testConsecutiveFramesDifferOnlyNearTheBoxAndCaption() {
        for format in TestPatternRenderer.layouts {
            let vf = VideoFormat(size: size, pixelFormat: format, framesPerSecond: 30)
            let renderer = TestPatternRenderer(format: vf)
            let first = render(renderer, sequence: 0)
            let second = render(renderer, sequence: 1)
            XCTAssertNotEqual(first, second, "\(format): the frame did not change")
            // The box (30 px, vertically centred: rows 105..<135) starts at x 0 and moves 2 px per frame.
            XCTAssertEqual(pixel(first, vf, x: 10, y: 120).y, YCbCr.white.y, "\(format): no box at frame 0")
            XCTAssertEqual(pixel(second, vf, x: 10, y: 120).y, YCbCr.white.y, "\(format): no box at frame 1")
            XCTAssertEqual(pixel(first, vf, x: 0, y: 120).y, YCbCr.white.y, "\(format)")
            XCTAssertEqual(pixel(second, vf, x: 0, y: 120), YCbCr(red: 191, green: 191, blue: 191), "\(format): the box did not move")
            XCTAssertEqual(pixel(second, vf, x: 31, y: 120).y, YCbCr.white.y, "\(format)")
            // Far from the box and the caption, the two frames are identical.
            var compared = 0
            for y in 0..<210 {
                for x in 0..<size.width where y < 96 || y >= 144 || x >= 64 {
                    let a = pixel(first, vf, x: x, y: y), b = pixel(second, vf, x: x, y: y)
                    if a != b {
                        XCTFail("\(format): pixel (\(x), \(y)) changed from \(a) to \(b)")
                        return
                    }
                    compared += 1
                }
            }
            XCTAssertGreaterThan(compared, 60_000)
        }
    }

    func testBoxBouncesBackAndStaysInsideTheFrame() {
        let vf = VideoFormat(size: size, pixelFormat: .yuv420, framesPerSecond: 30)
        let renderer = TestPatternRenderer(format: vf)
        // travel = 320 − 30 = 290 px at 2 px per frame: frame 145 is at the right edge, 290 back at 0.
        let right = render(renderer, sequence: 145)
        XCTAssertEqual(pixel(right, vf, x: 319, y: 120).y, YCbCr.white.y)
        XCTAssertNotEqual(pixel(right, vf, x: 288, y: 120).y, YCbCr.white.y)
        let back = render(renderer, sequence: 290)
        XCTAssertEqual(pixel(back, vf, x: 0, y: 120).y, YCbCr.white.y)
        let zero = render(renderer, sequence: 0)
        // Same box position, different frame number in the caption.
        XCTAssertEqual(back[..<(320 * 200)], zero[..<(320 * 200)])
        XCTAssertNotEqual(back, zero)
    }

    // MARK: Colour conversion

    private func assertBT601WithinOne(_ colours: [(String, Int, Int, Int)], file: StaticString = #filePath, line: UInt = #line) {
        for (name, r, g, b) in colours {
            let actual = YCbCr(red: r, green: g, blue: b)
            let expected = bt601(Double(r), Double(g), Double(b))
            XCTAssertEqual(Double(actual.y), expected.y, accuracy: 1, "\(name) Y", file: file, line: line)
            XCTAssertEqual(Double(actual.cb), expected.cb, accuracy: 1, "\(name) Cb", file: file, line: line)
            XCTAssertEqual(Double(actual.cr), expected.cr, accuracy: 1, "\(name) Cr", file: file, line: line)
        }
    }

    func testNegativeChromaTermsRoundDown() {
        // `(… + 128) / 256` truncates toward zero, so a negative chroma term comes out one
        // too high: green's Cb is 55 (BT.601: 53.8) and blue's Cr is 111 (BT.601: 109.8).
        // `>> 8` (floor) gives 54 and 110.
        assertBT601WithinOne([("green", 0, 255, 0), ("blue", 0, 0, 255), ("cyan", 0, 255, 255), ("magenta", 255, 0, 255)])
    }

    func testYCbCrFromRGBMatchesBT601WithinOne() {
        let colours: [(String, Int, Int, Int)] = [
            ("white", 255, 255, 255), ("black", 0, 0, 0), ("red", 255, 0, 0),
            ("grey", 191, 191, 191), ("yellow", 191, 191, 0), ("dark", 16, 16, 16),
        ]
        assertBT601WithinOne(colours)
        XCTAssertEqual(YCbCr(red: 255, green: 255, blue: 255), YCbCr(y: 235, cb: 128, cr: 128))
        XCTAssertEqual(YCbCr(red: 0, green: 0, blue: 0), YCbCr(y: 16, cb: 128, cr: 128))
        XCTAssertEqual(YCbCr(red: 255, green: 0, blue: 0).cr, 240)
    }

    func testBlackConstant() {
        XCTAssertEqual(YCbCr.black, YCbCr(red: 0, green: 0, blue: 0))
    }

    func testWhiteConstantIsPeakWhite() {
        // `YCbCr.white` is built from RGB 235,235,235, i.e. limited-range numbers fed to a
        // full-range converter: it comes out as Y 218 instead of BT.601 white, Y 235.
        XCTAssertEqual(YCbCr.white, YCbCr(red: 255, green: 255, blue: 255))
        XCTAssertEqual(YCbCr.white, YCbCr(y: 235, cb: 128, cr: 128))
    }
}

final class ToneGeneratorTests: XCTestCase {
    private func generate(_ generator: inout ToneGenerator, frames: Int, prefill: Int16 = 0x5A5A) -> [Int16] {
        var samples = [Int16](repeating: prefill, count: frames * generator.format.channels)
        samples.withUnsafeMutableBufferPointer { generator.fill($0, frameCount: frames) }
        return samples
    }

    /// Sign changes, ignoring exact zeros.
    private func zeroCrossings(_ samples: [Int16]) -> Int {
        var count = 0
        var previous: Int16 = 0
        for sample in samples where sample != 0 {
            if previous != 0 && (sample > 0) != (previous > 0) { count += 1 }
            previous = sample
        }
        return count
    }

    func testPeakAmplitude() {
        var tone = ToneGenerator(format: AudioFormat(sampleRate: 48_000, channels: 1), frequency: 1000)
        XCTAssertEqual(tone.amplitude, 0.25)
        let samples = generate(&tone, frames: 48_000)
        let expected = 0.25 * 32_767
        XCTAssertEqual(Double(samples.max()!), expected, accuracy: expected * 0.01)
        XCTAssertEqual(Double(samples.min()!), -expected, accuracy: expected * 0.01)

        var loud = ToneGenerator(format: AudioFormat(sampleRate: 48_000, channels: 1), frequency: 1000, amplitude: 1)
        let full = generate(&loud, frames: 4800)
        XCTAssertEqual(full.max(), Int16.max)
        XCTAssertEqual(full.min(), -Int16.max)
    }

    func testOneSecondOfOneKilohertzHasTwoThousandZeroCrossings() {
        for rate in [48_000, 44_100] {
            var tone = ToneGenerator(format: AudioFormat(sampleRate: rate, channels: 1), frequency: 1000)
            let crossings = zeroCrossings(generate(&tone, frames: rate))
            // Crossings at k / 2000 s for k = 1 … 1999 (the one at exactly 1 s is the next sample).
            XCTAssertTrue((1999...2000).contains(crossings), "\(rate) Hz: \(crossings) zero crossings")
        }
        var a440 = ToneGenerator(format: AudioFormat(sampleRate: 48_000, channels: 1), frequency: 440)
        let crossings = zeroCrossings(generate(&a440, frames: 48_000))
        XCTAssertTrue((879...880).contains(crossings), "440 Hz: \(crossings) zero crossings")
    }

    func testStartsAtZeroPhase() {
        var tone = ToneGenerator(format: AudioFormat(sampleRate: 48_000, channels: 1), frequency: 1000)
        let samples = generate(&tone, frames: 13)
        XCTAssertEqual(samples[0], 0)
        XCTAssertGreaterThan(samples[1], 0)
        // A quarter period (12 samples) is the peak.
        XCTAssertEqual(samples[12], Int16((0.25 * 32_767).rounded()))
    }

    func testPhaseIsContinuousAcrossFillCalls() {
        let format = AudioFormat(sampleRate: 48_000, channels: 1)
        var whole = ToneGenerator(format: format, frequency: 1000)
        let reference = generate(&whole, frames: 1000)

        var split = ToneGenerator(format: format, frequency: 1000)
        let pieces = generate(&split, frames: 437) + generate(&split, frames: 563)
        XCTAssertEqual(pieces, reference)

        // No jump at the boundary: the step is what a sine of this pitch allows.
        let maxStep = 2 * Double.pi * 1000 / 48_000 * 0.25 * 32_767 + 1
        for i in 1..<pieces.count {
            XCTAssertLessThanOrEqual(abs(Double(pieces[i]) - Double(pieces[i - 1])), maxStep, "jump at sample \(i)")
        }
    }

    func testPhaseStaysContinuousOverManyChunks() {
        let format = AudioFormat(sampleRate: 44_100, channels: 1)
        var whole = ToneGenerator(format: format, frequency: 1000)
        let reference = generate(&whole, frames: 44_100)
        var chunked = ToneGenerator(format: format, frequency: 1000)
        var pieces: [Int16] = []
        while pieces.count < 44_100 { pieces += generate(&chunked, frames: min(441, 44_100 - pieces.count)) }
        XCTAssertEqual(pieces, reference)
    }

    /// The rotation that replaced a `sin` call a sample stays on the sine: every sample of
    /// ten seconds (where drift would show) within one step of the exact value, in chunks
    /// of the microphone's 20 ms that do not line up with the rotation's restarts.
    func testRotationStaysOnTheExactSine() {
        let format = AudioFormat(sampleRate: 48_000, channels: 1)
        var tone = ToneGenerator(format: format, frequency: 440)
        var samples: [Int16] = []
        while samples.count < 480_000 { samples += generate(&tone, frames: 960) }
        let scale = 0.25 * Double(Int16.max)
        var worst = 0.0
        for (index, sample) in samples.enumerated() {
            let exact = sin(2 * Double.pi * 440 * Double(index) / 48_000) * scale
            worst = max(worst, abs(Double(sample) - exact))
        }
        XCTAssertLessThanOrEqual(worst, 0.51, "a sample strays \(worst) from the exact sine")
    }

    func testSilenceIsAllZeros() {
        var silence = ToneGenerator.silence(format: AudioFormat(sampleRate: 48_000, channels: 2))
        XCTAssertEqual(silence.amplitude, 0)
        let samples = generate(&silence, frames: 4800)
        XCTAssertEqual(samples.count, 9600)
        XCTAssertTrue(samples.allSatisfy { $0 == 0 })
    }

    func testToneWritesOnlyTheRequestedFrames() {
        var tone = ToneGenerator(format: AudioFormat(sampleRate: 48_000, channels: 2), frequency: 1000)
        var samples = [Int16](repeating: 0x5A5A, count: 200)
        samples.withUnsafeMutableBufferPointer { tone.fill($0, frameCount: 50) }
        XCTAssertTrue(samples[100...].allSatisfy { $0 == 0x5A5A })
        XCTAssertFalse(samples[..<100].contains(0x5A5A))
    }

    func testSilenceWritesOnlyTheRequestedFrames() {
        // `fill` promises `frameCount` frames; the silent path clears the whole buffer.
        var silence = ToneGenerator.silence(format: AudioFormat(sampleRate: 48_000, channels: 2))
        var samples = [Int16](repeating: 0x5A5A, count: 200)
        samples.withUnsafeMutableBufferPointer { silence.fill($0, frameCount: 50) }
        XCTAssertTrue(samples[..<100].allSatisfy { $0 == 0 })
        XCTAssertTrue(samples[100...].allSatisfy { $0 == 0x5A5A }, "silence wrote past frameCount")
    }

    func testStereoChannelsAreIdentical() {
        var tone = ToneGenerator(format: AudioFormat(sampleRate: 48_000, channels: 2), frequency: 1000)
        let samples = generate(&tone, frames: 4800)
        XCTAssertEqual(samples.count, 9600)
        var nonZero = 0
        for frame in 0..<4800 {
            XCTAssertEqual(samples[2 * frame], samples[2 * frame + 1], "frame \(frame)")
            if samples[2 * frame] != 0 { nonZero += 1 }
        }
        XCTAssertGreaterThan(nonZero, 4000)
        // And the left channel is the same signal a mono generator makes.
        var mono = ToneGenerator(format: AudioFormat(sampleRate: 48_000, channels: 1), frequency: 1000)
        XCTAssertEqual(stride(from: 0, to: 9600, by: 2).map { samples[$0] }, generate(&mono, frames: 4800))
    }

    func testShortBufferLimitsFrames() {
        var tone = ToneGenerator(format: AudioFormat(sampleRate: 48_000, channels: 2), frequency: 1000)
        var samples = [Int16](repeating: 0x5A5A, count: 11)
        // Asking for more frames than fit writes only whole frames that fit (5), not past the end.
        samples.withUnsafeMutableBufferPointer { tone.fill($0, frameCount: 100) }
        XCTAssertEqual(samples[10], 0x5A5A)
        XCTAssertEqual(samples[8], samples[9])
    }
}

final class RingBufferTests: XCTestCase {
    func testEmptyAndCapacity() {
        var ring = RingBuffer<Int>(capacity: 3)
        XCTAssertEqual(ring.capacity, 3)
        XCTAssertTrue(ring.isEmpty)
        XCTAssertFalse(ring.isFull)
        XCTAssertNil(ring.first)
        XCTAssertNil(ring.popFirst())
        XCTAssertEqual(RingBuffer<Int>(capacity: 0).capacity, 1)
    }

    func testFillAndEmpty() {
        var ring = RingBuffer<Int>(capacity: 3)
        ring.append(1)
        ring.append(2)
        ring.append(3)
        XCTAssertTrue(ring.isFull)
        XCTAssertEqual(ring.count, 3)
        XCTAssertEqual(ring.first, 1)
        XCTAssertEqual([ring.popFirst(), ring.popFirst(), ring.popFirst()], [1, 2, 3])
        XCTAssertNil(ring.popFirst())
        XCTAssertTrue(ring.isEmpty)
    }

    func testWrapsCorrectlyOverManyCycles() {
        var ring = RingBuffer<Int>(capacity: 5)
        var model: [Int] = []
        var next = 0
        // A deterministic pattern of pushes and pops that passes the end of storage many times.
        for step in 0..<10_000 {
            let pushes = (step * 7) % 4, pops = (step * 5) % 4
            for _ in 0..<pushes where !ring.isFull {
                ring.append(next)
                model.append(next)
                next += 1
            }
            for _ in 0..<pops {
                XCTAssertEqual(ring.popFirst(), model.isEmpty ? nil : model.removeFirst())
            }
            XCTAssertEqual(ring.count, model.count)
            XCTAssertEqual(ring.first, model.first)
            XCTAssertEqual(ring.isFull, model.count == 5)
            XCTAssertEqual(ring.isEmpty, model.isEmpty)
        }
        XCTAssertGreaterThan(next, 1000, "the pattern should push many elements")
        while let value = ring.popFirst() { XCTAssertEqual(value, model.removeFirst()) }
        XCTAssertTrue(model.isEmpty)
    }

    func testPopReleasesElements() {
        final class Token {}
        var ring = RingBuffer<Token>(capacity: 2)
        weak var weakToken: Token?
        do {
            let token = Token()
            weakToken = token
            ring.append(token)
        }
        XCTAssertNotNil(weakToken)
        _ = ring.popFirst()
        XCTAssertNil(weakToken, "a popped element is still retained by its slot")
    }
}
