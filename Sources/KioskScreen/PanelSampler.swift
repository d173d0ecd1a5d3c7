import Foundation
import KioskCore

/// How bright one patch of a framebuffer is, read hundreds of times a second on its own
/// thread, each reading stamped on the clock it is given (CLOCK_MONOTONIC in use): an
/// outside witness of what the panel showed and when, for measuring a player's A/V sync
/// and a tap's latency against the sound card's timestamps (the HIL media test), without
/// trusting anything the player says about itself.
///
/// Reads only the patch, so a 16x16 patch costs ~256 pixel reads a sample. The samples
/// are kept up to `capacity`; later ones are counted in `droppedSamples`, so memory is
/// bounded however long it runs. Start once, `stop()` once (or drop it); the framebuffer
/// stays the caller's, to be closed after `stop()`.
public final class PanelSampler: Sendable {
    /// One reading: when, and the patch's mean brightness, 0 (black) … 255 (white), the
    /// mean of red, green and blue.
    public struct Sample: Sendable, Equatable {
        public var time: MonotonicInstant
        public var brightness: Double

        public init(time: MonotonicInstant, brightness: Double) {
            self.time = time
            self.brightness = brightness
        }
    }

    public let patch: ScreenRect
    public let samplesPerSecond: Int
    private let framebuffer: Framebuffer
    private let packer: PixelPacker
    private let clock: MonotonicClock
    private let capacity: Int
    private struct State {
        var samples: [Sample] = []
        var dropped = 0
        var stopRequested = false
    }
    private let state = Locked(State())
    private let thread = ThreadGroup()

    /// - Parameters:
    ///   - framebuffer: Any backing; read, never written.
    ///   - patch: Panel pixels to average (unturned panel coordinates), inside the panel.
    ///   - samplesPerSecond: 1…2000; 250 gives one reading every 4 ms.
    ///   - capacity: Samples kept (at least 1).
    ///   - clock: What stamps each reading; the same clock as whatever it is compared with.
    /// - Throws: `ScreenError` `.invalidGeometry` for an empty patch, one outside the
    ///   panel, or a rate outside 1…2000 (the message says which).
    public init(framebuffer: Framebuffer, patch: ScreenRect, samplesPerSecond: Int, capacity: Int,
                clock: MonotonicClock) throws(ScreenError) {
        let panel = framebuffer.size
        guard patch.width > 0, patch.height > 0, patch.x >= 0, patch.y >= 0,
              patch.maxX <= panel.width, patch.maxY <= panel.height else {
            throw ScreenError(.invalidGeometry, path: framebuffer.path, operation: "sample a patch",
                              detail: "patch \(patch) is empty or outside the \(panel) panel",
                              hint: "give a patch of at least one pixel inside the panel")
        }
        guard (1...2000).contains(samplesPerSecond) else {
            throw ScreenError(.invalidGeometry, path: framebuffer.path, operation: "sample a patch",
                              detail: "\(samplesPerSecond) samples a second is outside 1…2000",
                              hint: "ask for 200–1000 samples a second")
        }
        self.framebuffer = framebuffer
        self.patch = patch
        self.samplesPerSecond = samplesPerSecond
        packer = PixelPacker(framebuffer.format)
        self.clock = clock
        self.capacity = max(1, capacity)
        state.withLock { $0.samples.reserveCapacity(self.capacity) }
    }

    deinit { stop() }

    /// The readings so far, in time order.
    public var samples: [Sample] { state.withLock { $0.samples } }
    /// Readings not kept because `capacity` were already kept.
    public var droppedSamples: Int { state.withLock { $0.dropped } }

    /// Starts reading on a thread of its own ("kioskcam.panel.sampler").
    public func start() {
        thread.start(name: "kioskcam.panel.sampler") { [self] in
            let period = Int64(1_000_000_000 / samplesPerSecond)
            var due = clock.now()
            while true {
                let reading = Sample(time: clock.now(), brightness: brightness())
                let stopping = state.withLock { state -> Bool in
                    if state.samples.count < capacity { state.samples.append(reading) } else { state.dropped += 1 }
                    return state.stopRequested
                }
                if stopping { return }
                due = due.advanced(byNanoseconds: period)
                let wait = due.nanoseconds(since: clock.now())
                if wait <= 0 {
                    // Behind (a loaded machine): read again now, and pace from here, no burst.
                    due = clock.now()
                    continue
                }
                state.withLock(waitingUntil: { $0.stopRequested }, deadline: Date(timeIntervalSinceNow: Double(wait) / 1e9)) { _ in }
            }
        }
    }

    /// Stops reading and waits for the thread; the samples stay readable.
    public func stop() {
        state.withLock { $0.stopRequested = true }
        state.wakeWaiters()
        thread.wait()
    }

    /// The patch's mean brightness now.
    private func brightness() -> Double {
        let plane = framebuffer.plane
        let bytes = packer.bytesPerPixel
        var total = 0
        for y in patch.y..<patch.maxY {
            let row = plane.base + y * plane.stride
            for x in patch.x..<patch.maxX {
                let raw = bytes == 2 ? UInt32(row.loadUnaligned(fromByteOffset: x * 2, as: UInt16.self))
                                     : row.loadUnaligned(fromByteOffset: x * 4, as: UInt32.self)
                let pixel = packer.unpack(raw)
                total += Int((pixel >> 16) & 0xFF) + Int((pixel >> 8) & 0xFF) + Int(pixel & 0xFF)
            }
        }
        return Double(total) / Double(3 * patch.width * patch.height)
    }
}
