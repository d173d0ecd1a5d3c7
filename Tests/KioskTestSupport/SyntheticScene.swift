import Foundation

/// Deterministic camera scenes for motion and event tests, written as raw YU12 (I420)
/// frames for the file camera: a still, textured background; optionally a bright box
/// that moves, and a brightness offset (a light switched on). Each frame carries its
/// number as 12 bits in a strip of 16x16 black/white blocks along the top edge (mask
/// the top 8 % in motion tests), which survive H.264 and are read back from decoded
/// pictures.
public struct SyntheticScene {
    public let width: Int
    public let height: Int
    public let framesPerSecond: Int
    public static let blockSize = 16
    public static let bits = 12

    public init(width: Int = 320, height: Int = 240, framesPerSecond: Int = 30) {
        self.width = width
        self.height = height
        self.framesPerSecond = framesPerSecond
    }

    /// What one frame shows.
    public struct Frame {
        /// The box's top-left corner, or nil for no box.
        public var box: (x: Int, y: Int)?
        public var boxSize: Int = 40
        /// Added to the background's brightness.
        public var brightness: Int = 0
        /// Sensor noise: each pixel off by up to this much, different in every frame.
        public var noise: Int = 0

        public init(box: (x: Int, y: Int)? = nil, boxSize: Int = 40, brightness: Int = 0, noise: Int = 0) {
            self.box = box
            self.boxSize = boxSize
            self.brightness = brightness
            self.noise = max(0, noise)
        }
    }

    /// Writes `count` frames to `path`; `frame(n)` says what frame n shows.
    public func write(to path: String, count: Int, _ frame: (Int) -> Frame) throws {
        let lumaBytes = width * height, chromaBytes = (width / 2) * (height / 2)
        var data = Data(capacity: count * (lumaBytes + 2 * chromaBytes))
        var luma = [UInt8](repeating: 0, count: lumaBytes)
        let chroma = [UInt8](repeating: 128, count: 2 * chromaBytes)
        // Noise from a fixed generator: 7 planes of values in -1…1 (times 1/64), cycled.
        var seed: UInt64 = 0x9E37_79B9_7F4A_7C15
        let planes = (0..<7).map { _ in
            (0..<lumaBytes).map { _ -> Int in
                seed = seed &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
                return Int(seed >> 57) - 64
            }
        }
        for number in 0..<count {
            let scene = frame(number)
            let plane = planes[number % planes.count]
            for y in 0..<height {
                for x in 0..<width {
                    var value = 70 + ((x / 20 + y / 20) % 3) * 25 + scene.brightness
                    if scene.noise > 0 { value += plane[y * width + x] * scene.noise / 64 }
                    if let box = scene.box, x >= box.x, x < box.x + scene.boxSize, y >= box.y, y < box.y + scene.boxSize {
                        value = 235
                    }
                    if y < Self.blockSize, x / Self.blockSize < Self.bits {
                        value = (number >> (x / Self.blockSize)) & 1 == 1 ? 235 : 16
                    }
                    luma[y * width + x] = UInt8(clamping: value)
                }
            }
            data.append(contentsOf: luma)
            data.append(contentsOf: chroma)
        }
        try data.write(to: URL(fileURLWithPath: path))
    }

    /// The frame numbers of every picture in a video file, read from its blocks.
    public func frameNumbers(of video: String, scratch: String) throws -> [Int] {
        let raw = scratch + "/scene-decoded.gray"
        try Tool.run("ffmpeg", ["-nostdin", "-v", "error", "-y", "-i", video, "-map", "0:v", "-vsync", "passthrough",
                                "-f", "rawvideo", "-pix_fmt", "gray", raw])
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: raw)))
        let frameBytes = width * height
        return stride(from: 0, to: bytes.count - frameBytes + 1, by: frameBytes).map { offset in
            (0..<Self.bits).reduce(0) { number, bit in
                let centre = offset + (Self.blockSize / 2) * width + bit * Self.blockSize + Self.blockSize / 2
                return bytes[centre] > 128 ? number | (1 << bit) : number
            }
        }
    }
}
