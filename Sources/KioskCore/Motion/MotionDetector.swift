/// Motion detection on the luma branch's small grey frames — the cheap recipe that
/// works: each frame against a slowly running average of the scene (the background),
/// a changed-pixel threshold that follows the camera's own noise, an opening
/// (erode, then dilate) that wipes out speckle, and the largest connected blob of what
/// is left as a share of the watched (unmasked) area. A score over
/// `thresholdPercent` for `minimumFrames` frames in a row is motion; as many frames
/// below it end it. When most of the frame changes at once (a light switched on, the
/// IR-cut filter flipping) the background is taken afresh and nothing fires.
///
/// Pure and single-threaded: the luma branch's thread owns one, feeds it every frame
/// and reads the result. At 320x180 a frame is ~58,000 pixels of integer arithmetic.
public struct MotionDetector: Sendable {
    public struct Settings: Sendable, Equatable {
        /// Motion when the largest changed blob covers more than this share of the
        /// watched area, in percent.
        public var thresholdPercent: Double
        /// Frames in a row over (or under) the threshold before motion starts (or ends).
        public var minimumFrames: Int
        /// A change over this share of the watched area at once is a light switch, not
        /// motion: the background resets.
        public var lightSwitchPercent: Double
        /// How fast the background follows the scene: it moves 1/2^shift of the way to
        /// each frame (5: ~1/32 per frame, about four seconds at 8 fps to take in a
        /// parked car).
        public var backgroundShift: Int
        /// The smallest brightness change that counts, whatever the noise.
        public var minimumPixelDelta: Int
        /// After a (re)start nothing fires for this long while the background follows the
        /// picture quickly: a camera's exposure and white balance settle in the first
        /// second or two, and every restart of the daemon would otherwise be an event.
        public var warmUpSeconds: Double

        public init(thresholdPercent: Double = 1.5, minimumFrames: Int = 2, lightSwitchPercent: Double = 50,
                    backgroundShift: Int = 5, minimumPixelDelta: Int = 12, warmUpSeconds: Double = 2) {
            self.warmUpSeconds = warmUpSeconds.isFinite ? min(max(0, warmUpSeconds), 60) : 2
            self.thresholdPercent = thresholdPercent
            self.minimumFrames = max(1, minimumFrames)
            self.lightSwitchPercent = lightSwitchPercent
            self.backgroundShift = min(max(backgroundShift, 1), 8)
            self.minimumPixelDelta = min(max(minimumPixelDelta, 1), 255)
        }
    }

    /// What one frame showed.
    public struct Observation: Sendable, Equatable {
        /// The largest changed blob as a share of the watched area, percent.
        public var score: Double
        /// Every changed pixel (after the opening) as a share of the watched area, percent.
        public var changedPercent: Double
        /// Where the largest blob is, as fractions of the frame (0…1), or nil without one.
        public var region: MotionRegion?
        /// Motion after hysteresis.
        public var isMotion: Bool
        /// Motion started or ended with this frame.
        public var transition: MotionTransition?
        /// The frame changed too much at once: the background was reset.
        public var lightSwitch: Bool
        /// The per-pixel change that counted as "changed" for this frame.
        public var pixelThreshold: Int
    }

    public let settings: Settings
    private var size: (width: Int, height: Int)?
    /// Watched pixels: true where the mask does not exclude them, at the frame's size.
    private var watched: [Bool] = []
    private var watchedCount = 0
    private var mask: MotionMask
    /// The background in 8.8 fixed point.
    private var background: [UInt16] = []
    /// Mean absolute difference of still frames, 8.8 fixed point: the camera's noise.
    private var noise: Int = 0
    private var framesSeen = 0
    /// The first frame's time since the last reset (the warm-up runs from it).
    private var firstFrameTime: MonotonicInstant?
    private var isMotion = false
    private var streak = 0
    /// Light switches in consecutive frames: more than one is not a light but noise.
    private var lightSwitchStreak = 0
    /// The last frame's changed pixels after the opening (for `motion-tune` pictures).
    public private(set) var changedPixels: [Bool] = []

    public init(settings: Settings = Settings(), mask: MotionMask = MotionMask()) {
        self.settings = settings
        self.mask = mask
    }

    /// Feeds one frame. A frame of another size than the last starts over.
    public mutating func observe(_ frame: LumaFrame) -> Observation {
        let width = frame.width, height = frame.height
        let count = width * height
        guard width > 0, height > 0, frame.pixels.count >= count else {
            return Observation(score: 0, changedPercent: 0, region: nil, isMotion: isMotion, transition: nil,
                               lightSwitch: false, pixelThreshold: settings.minimumPixelDelta)
        }
        if size?.width != width || size?.height != height { reset(width: width, height: height, frame) }
        framesSeen += 1
        let firstTime = firstFrameTime ?? frame.time
        firstFrameTime = firstTime
        let sinceStart = frame.time.seconds(since: firstTime)
        if sinceStart < settings.warmUpSeconds {
            // Warming up: the background follows the picture a quarter of the way per
            // frame, and nothing is reported. In the second half, when the background
            // has settled, the camera's noise is measured, so that the first watched
            // frame already knows it (a noisy camera in the dark is ±20 grey levels).
            if sinceStart >= settings.warmUpSeconds / 2 {
                let measured = meanDifference(frame)
                noise = noise == 0 ? measured : noise + (measured - noise) / 4
            }
            learn(frame, shift: 2, slowerWhere: [])
            changedPixels = [Bool](repeating: false, count: count)
            return Observation(score: 0, changedPercent: 0, region: nil, isMotion: false, transition: nil,
                               lightSwitch: false, pixelThreshold: settings.minimumPixelDelta)
        }

        // 1. Changed pixels against the background, with the noise-following threshold.
        let threshold = max(settings.minimumPixelDelta, (3 * noise + 128) >> 8 + 4)
        var changed = [Bool](repeating: false, count: count)
        var differenceSum = 0
        var watchedChanged = 0
        frame.pixels.withUnsafeBufferPointer { pixels in
            background.withUnsafeBufferPointer { background in
                for index in 0..<count where watched[index] {
                    let difference = abs(Int(pixels[index]) - Int(background[index] >> 8))
                    differenceSum += difference
                    if difference >= threshold {
                        changed[index] = true
                        watchedChanged += 1
                    }
                }
            }
        }
        let watchedTotal = max(watchedCount, 1)
        let rawChangedPercent = Double(watchedChanged) * 100 / Double(watchedTotal)

        // 2. A light switch: take the scene afresh, report nothing.
        if framesSeen > 1, rawChangedPercent > settings.lightSwitchPercent {
            // A light changes the picture once; a picture that "changes" frame after
            // frame is noise above the threshold: take it as the noise, so the threshold
            // rises over it instead of retaking the background for ever.
            lightSwitchStreak += 1
            if lightSwitchStreak > 1, watchedCount > 0 { noise = max(noise, (differenceSum << 8) / watchedCount) }
            takeBackground(frame)
            streak = 0
            let ended = isMotion
            isMotion = false
            changedPixels = [Bool](repeating: false, count: count)
            return Observation(score: 0, changedPercent: rawChangedPercent, region: nil, isMotion: false,
                               transition: ended ? .ended : nil, lightSwitch: true, pixelThreshold: threshold)
        }

        lightSwitchStreak = 0

        // 3. Opening: erode then dilate, 3x3.
        let opened = Self.dilate(Self.erode(changed, width: width, height: height), width: width, height: height)
        changedPixels = opened
        var openedCount = 0
        for index in 0..<count where opened[index] && watched[index] { openedCount += 1 }

        // 4. The largest blob.
        let blob = Self.largestBlob(opened, watched: watched, width: width, height: height)
        let score = Double(blob?.pixelCount ?? 0) * 100 / Double(watchedTotal)

        // 5. Hysteresis.
        var transition: MotionTransition?
        let over = framesSeen > 1 && score > settings.thresholdPercent
        if over != isMotion {
            streak += 1
            if streak >= settings.minimumFrames {
                isMotion = over
                streak = 0
                transition = over ? .started : .ended
            }
        } else {
            streak = 0
        }

        // 6. Learn: the noise from frames without motion; the background everywhere,
        // a quarter as fast where something changed, so a passer-by is not absorbed.
        if !over, watchedCount > 0 {
            let meanDifference = (differenceSum << 8) / watchedCount
            noise = noise == 0 ? meanDifference : noise + (meanDifference - noise) / 16
        }
        learn(frame, shift: settings.backgroundShift, slowerWhere: changed)

        let region = blob.map { blob in
            MotionRegion(x: Double(blob.minX) / Double(width), y: Double(blob.minY) / Double(height),
                         width: Double(blob.maxX - blob.minX + 1) / Double(width),
                         height: Double(blob.maxY - blob.minY + 1) / Double(height))
        }
        return Observation(score: score, changedPercent: Double(openedCount) * 100 / Double(watchedTotal), region: region,
                           isMotion: isMotion, transition: transition, lightSwitch: false, pixelThreshold: threshold)
    }

    /// The mean absolute difference of the watched pixels from the background, 8.8 fixed point.
    private func meanDifference(_ frame: LumaFrame) -> Int {
        let count = min(frame.pixels.count, background.count, watched.count)
        var sum = 0
        frame.pixels.withUnsafeBufferPointer { pixels in
            background.withUnsafeBufferPointer { background in
                for index in 0..<count where watched[index] {
                    sum += abs(Int(pixels[index]) - Int(background[index] >> 8))
                }
            }
        }
        return watchedCount > 0 ? (sum << 8) / watchedCount : 0
    }

    /// Moves the 8.8 fixed-point background towards `frame` by 1/2^`shift` of the
    /// difference, four times slower where `changed` (empty: nowhere), and by at least
    /// one step, so that it never stalls just short of the picture.
    private mutating func learn(_ frame: LumaFrame, shift: Int, slowerWhere changed: [Bool]) {
        let count = min(frame.pixels.count, background.count)
        let marked = changed.count >= count
        frame.pixels.withUnsafeBufferPointer { pixels in
            background.withUnsafeMutableBufferPointer { background in
                for index in 0..<count {
                    let target = Int(pixels[index]) << 8
                    let current = Int(background[index])
                    let step = (target - current) >> (marked && changed[index] ? shift + 2 : shift)
                    background[index] = UInt16(clamping: current + (step == 0 && target != current ? (target > current ? 1 : -1) : step))
                }
            }
        }
    }

    /// The background as 8-bit grey, for `motion-tune` pictures; empty before a frame.
    public var backgroundPixels: [UInt8] { background.map { UInt8(truncatingIfNeeded: $0 >> 8) } }

    /// The watched pixels at the last frame's size, for `motion-tune` pictures.
    public var watchedPixels: [Bool] { watched }

    private mutating func reset(width: Int, height: Int, _ frame: LumaFrame) {
        size = (width, height)
        watched = mask.watched(width: width, height: height)
        watchedCount = watched.reduce(0) { $0 + ($1 ? 1 : 0) }
        takeBackground(frame)
        noise = 0
        lightSwitchStreak = 0
        framesSeen = 0
        firstFrameTime = nil
        streak = 0
        isMotion = false
    }

    private mutating func takeBackground(_ frame: LumaFrame) {
        background = frame.pixels.prefix(frame.width * frame.height).map { UInt16($0) << 8 }
    }

    // MARK: - Morphology and blobs

    /// A pixel stays only if its whole 3x3 neighbourhood changed (edges count as unchanged).
    static func erode(_ input: [Bool], width: Int, height: Int) -> [Bool] {
        var output = [Bool](repeating: false, count: input.count)
        guard width >= 3, height >= 3 else { return output }
        for y in 1..<(height - 1) {
            for x in 1..<(width - 1) {
                let index = y * width + x
                guard input[index] else { continue }
                output[index] = input[index - width - 1] && input[index - width] && input[index - width + 1]
                    && input[index - 1] && input[index + 1]
                    && input[index + width - 1] && input[index + width] && input[index + width + 1]
            }
        }
        return output
    }

    /// A pixel is set if any pixel of its 3x3 neighbourhood is.
    static func dilate(_ input: [Bool], width: Int, height: Int) -> [Bool] {
        var output = [Bool](repeating: false, count: input.count)
        for y in 0..<height {
            for x in 0..<width where input[y * width + x] {
                for dy in -1...1 {
                    let row = y + dy
                    guard row >= 0, row < height else { continue }
                    for dx in -1...1 {
                        let column = x + dx
                        guard column >= 0, column < width else { continue }
                        output[row * width + column] = true
                    }
                }
            }
        }
        return output
    }

    struct Blob: Equatable {
        var pixelCount: Int
        var minX: Int, minY: Int, maxX: Int, maxY: Int
    }

    /// The largest 8-connected set of changed, watched pixels.
    static func largestBlob(_ changed: [Bool], watched: [Bool], width: Int, height: Int) -> Blob? {
        var visited = [Bool](repeating: false, count: changed.count)
        var stack: [Int] = []
        var best: Blob?
        for start in 0..<changed.count where changed[start] && watched[start] && !visited[start] {
            var blob = Blob(pixelCount: 0, minX: width, minY: height, maxX: 0, maxY: 0)
            visited[start] = true
            stack.append(start)
            while let index = stack.popLast() {
                let x = index % width, y = index / width
                blob.pixelCount += 1
                blob.minX = min(blob.minX, x)
                blob.maxX = max(blob.maxX, x)
                blob.minY = min(blob.minY, y)
                blob.maxY = max(blob.maxY, y)
                for dy in -1...1 {
                    let row = y + dy
                    guard row >= 0, row < height else { continue }
                    for dx in -1...1 {
                        let column = x + dx
                        guard column >= 0, column < width else { continue }
                        let neighbour = row * width + column
                        if changed[neighbour], watched[neighbour], !visited[neighbour] {
                            visited[neighbour] = true
                            stack.append(neighbour)
                        }
                    }
                }
            }
            if blob.pixelCount > (best?.pixelCount ?? 0) { best = blob }
        }
        return best
    }
}

public enum MotionTransition: Sendable, Equatable {
    case started
    case ended
}

/// A rectangle as fractions of the frame: 0…1 from the top-left corner.
public struct MotionRegion: Sendable, Equatable, Codable {
    public var x: Double
    public var y: Double
    public var width: Double
    public var height: Double

    public init(x: Double, y: Double, width: Double, height: Double) {
        self.x = x
        self.y = y
        self.width = width
        self.height = height
    }

    /// The region's centre, as fractions of the frame.
    public var center: (x: Double, y: Double) { (x + width / 2, y + height / 2) }
}

/// Where motion is not looked for: rectangles (fractions of the frame, so one mask fits
/// every resolution) and, optionally, a picture of the frame whose dark pixels are
/// ignored (a PNG the user painted, decoded elsewhere to grey at any size).
public struct MotionMask: Sendable, Equatable {
    public var ignoredRegions: [MotionRegion]
    /// A grey picture, row by row; pixels darker than 128 are ignored. Scaled (nearest)
    /// to the luma frame's size.
    public var picture: (width: Int, height: Int, pixels: [UInt8])?

    public init(ignoredRegions: [MotionRegion] = [], picture: (width: Int, height: Int, pixels: [UInt8])? = nil) {
        self.ignoredRegions = ignoredRegions
        self.picture = picture
    }

    public static func == (lhs: MotionMask, rhs: MotionMask) -> Bool {
        lhs.ignoredRegions == rhs.ignoredRegions && lhs.picture?.width == rhs.picture?.width
            && lhs.picture?.height == rhs.picture?.height && lhs.picture?.pixels == rhs.picture?.pixels
    }

    /// True for each pixel of a `width × height` frame that is watched.
    public func watched(width: Int, height: Int) -> [Bool] {
        var watched = [Bool](repeating: true, count: max(0, width * height))
        guard width > 0, height > 0 else { return watched }
        for region in ignoredRegions {
            let left = Self.pixel(region.x, width), right = Self.pixel(region.x + region.width, width)
            let top = Self.pixel(region.y, height), bottom = Self.pixel(region.y + region.height, height)
            guard left < right, top < bottom else { continue }
            for y in top..<bottom {
                for x in left..<right { watched[y * width + x] = false }
            }
        }
        if let picture, picture.width > 0, picture.height > 0, picture.pixels.count >= picture.width * picture.height {
            for y in 0..<height {
                let sourceRow = y * picture.height / height
                for x in 0..<width {
                    let sourceColumn = x * picture.width / width
                    if picture.pixels[sourceRow * picture.width + sourceColumn] < 128 { watched[y * width + x] = false }
                }
            }
        }
        return watched
    }

    /// A fraction of the frame as a pixel boundary, clamped to the frame.
    private static func pixel(_ fraction: Double, _ extent: Int) -> Int {
        guard fraction.isFinite else { return 0 }
        return min(max(Int((fraction * Double(extent)).rounded()), 0), extent)
    }
}
