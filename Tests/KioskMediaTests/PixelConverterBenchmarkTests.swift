import CAVCodec
import CAVUtil
import Foundation
import KioskCore
import KioskTestSupport
import XCTest

@testable import KioskMedia

/// What turning one 1280x720 camera frame into the encoder's input costs, per layout, and
/// what decoding an MJPEG frame costs: the numbers behind `PixelFormat.Cost`'s order.
/// Run with `KIOSKCAM_BENCH=1 swift test --filter PixelConverterBenchmarkTests`; it prints
/// one line per layout. Every case runs once per round, so a busy machine slows them all
/// alike, and the minimum over the rounds is kept.
final class PixelConverterBenchmarkTests: XCTestCase {
    let size = FrameSize(width: 1280, height: 720)

    func testConversionCostPerLayout() throws {
        guard ProcessInfo.processInfo.environment["KIOSKCAM_BENCH"] == "1" else {
            throw XCTSkip("a benchmark: set KIOSKCAM_BENCH=1 to run it")
        }
        let rounds = Int(ProcessInfo.processInfo.environment["KIOSKCAM_BENCH_ROUNDS"] ?? "") ?? 200
        let x264 = try XCTUnwrap(avcodec_find_encoder_by_name("libx264"))

        struct Case {
            var name: String
            var run: () -> Void
            var best = Double.infinity
        }
        var cases: [Case] = []
        var keepAlive: [AnyObject] = []

        // Raw layouts, as the encoder's converter runs them (noise: no special-casing flat input).
        var generator = SystemRandomNumberGenerator()
        for layout in PixelFormat.allCases {
            let source = VideoFormat(size: size, pixelFormat: layout, framesPerSecond: 30)
            let destination = LibavVideoEncoder.choosePixelFormat(x264, for: layout)
            let converter = try PixelConverter(source: source, destinationSize: size, destinationFormat: destination)
            let picture = try Frame.picture(size: size, format: destination, operation: "benchmark")
            let pixels = UnsafeMutableRawBufferPointer.allocate(byteCount: layout.frameByteCount(size), alignment: 64)
            for index in pixels.indices { pixels[index] = UInt8.random(in: 0...255, using: &generator) }
            keepAlive += [converter, picture]
            cases.append(Case(name: "\(layout.rawValue) → \(destination.name)") {
                converter.convert(UnsafeRawPointer(pixels.baseAddress!), into: picture.pointer)
            })
        }

        // MJPEG: a plain frame (~50 KB) and a noisy one (~250 KB, like a webcam's at 720p).
        let folder = TemporaryDirectory("kioskcam-bench")
        for (label, filter) in [("plain", "null"), ("noisy", "noise=alls=12:allf=t")] {
            let path = folder.path + "/\(label).jpg"
            try Tool.run("ffmpeg", ["-v", "error", "-f", "lavfi", "-i", "testsrc2=size=\(size)", "-vf", filter, "-frames:v", "1",
                                    "-q:v", "4", "-pix_fmt", "yuvj422p", "-y", path])
            let jpeg = try [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))
            let decoder = try MJPEGDecoder(size: size, maximumFrameBytes: jpeg.count * 2)
            var output = [UInt8](repeating: 0, count: decoder.outputByteCount)
            keepAlive.append(decoder)
            cases.append(Case(name: "MJPG \(jpeg.count / 1000) KB → yuv420p") {
                jpeg.withUnsafeBytes { input in output.withUnsafeMutableBytes { _ = try? decoder.decode(input, into: $0) } }
            })
        }

        for _ in 0..<rounds {
            for index in cases.indices {
                let start = DispatchTime.now().uptimeNanoseconds
                cases[index].run()
                let seconds = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
                cases[index].best = min(cases[index].best, seconds)
            }
        }
        print("conversion cost at \(size), minimum of \(rounds) interleaved rounds:")
        for item in cases {
            print("  " + item.name.padding(toLength: 28, withPad: " ", startingAt: 0) + String(format: "%6.2f ms", item.best * 1000))
        }
        withExtendedLifetime(keepAlive) {}
    }
}
