import Foundation
import KioskCore

/// The built-in camera: a moving test pattern with a burned-in date, time and frame
/// number, delivered in a real camera pixel format and paced in real time. It is what
/// `kioskcam` records when no camera is present.
public final class TestPatternCamera: VideoSource, Sendable {
    public let format: VideoFormat
    public var name: String { "test pattern" }
    private let renderer: TestPatternRenderer
    private let pool: BufferPool
    private let clock: SystemClock
    private let thread = SourceThread()

    /// - Parameters:
    ///   - format: Size, rate and layout; a layout the pattern is not drawn in becomes
    ///     YUYV (see `TestPatternRenderer.layouts`; `format` then says so).
    ///   - bufferCount: Frames that may be in flight at once (queue + encoder).
    /// Whether each frame carries its capture time as blocks (`TestPatternRenderer.clockStrip`).
    private let burnsClock: Bool

    public init(format requested: VideoFormat, bufferCount: Int = 12, burnsClock: Bool = false) {
        self.burnsClock = burnsClock
        renderer = TestPatternRenderer(format: requested)
        format = renderer.format
        pool = BufferPool(bufferCapacity: format.frameByteCount, count: bufferCount)
        clock = SystemClock()
    }

    public func start(into sink: CaptureSink) {
        let pacer = Pacer(start: clock.now(), periodNanoseconds: format.frameDurationNanoseconds)
        thread.start(name: "kioskcam.camera.test") { [self] thread in
            var sequence = 0
            var captionSecond = -1.0
            var caption: [UInt8] = []
            caption.reserveCapacity(32)
            while !thread.shouldStop {
                SystemClock.sleep(until: pacer.deadline(sequence))
                let timestamp = clock.now()
                let now = Date()
                let second = now.timeIntervalSince1970.rounded(.down)
                if second != captionSecond {
                    captionSecond = second
                    caption = Array(Self.caption(for: now).utf8)
                }
                if let buffer = pool.take() {
                    let clock = burnsClock ? UInt32(UInt64(now.timeIntervalSince1970 * 1000) & ((1 << TestPatternRenderer.clockBits) - 1)) : nil
                    renderer.render(into: buffer.mutableBytes, sequence: sequence, caption: caption, clockMilliseconds: clock)
                    buffer.byteCount = format.frameByteCount
                    sink.deliver(VideoFrame(buffer: buffer, format: format, timestamp: timestamp, sequence: sequence))
                }
                sequence += 1
                // After a long stall, skip the missed slots instead of bursting to catch up.
                if clock.now().nanoseconds(since: pacer.deadline(sequence)) > 10 * format.frameDurationNanoseconds {
                    sequence = Int(clock.now().nanoseconds(since: pacer.start) / format.frameDurationNanoseconds) + 1
                }
            }
            sink.videoSourceEnded(name, .stopped)
        }
    }

    public func stop() { thread.stop() }

    /// "2026-11-22 00:15:03" in local time.
    static func caption(for date: Date) -> String { LocalTimestamp(date).readable }

    /// Renders one frame without starting the thread (for `kioskcam snapshot` and tests).
    public func renderStill(sequence: Int = 0, date: Date = Date()) -> MediaBuffer {
        let buffer = MediaBuffer(capacity: format.frameByteCount)
        renderer.render(into: buffer.mutableBytes, sequence: sequence, caption: Array(Self.caption(for: date).utf8))
        buffer.byteCount = format.frameByteCount
        return buffer
    }
}
