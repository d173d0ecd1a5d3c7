import Foundation
import KioskCore
import KioskRecording
import KioskTestSupport
import Logging
import XCTest
@testable import KioskAppliance

/// The event recorder between its inputs and a stand-in clip output, on a clock the test
/// drives: which clips start and end, with how much pre-event time, and what the event
/// log and the socket are told.
final class EventRecorderTests: XCTestCase {
    private final class FakeClips: EventClipOutput, @unchecked Sendable {
        let lock = Lock()
        var started: [(preSeconds: Double, label: String)] = []
        var ended = 0
        /// Seconds the pre-event ring holds.
        var held = Double.infinity
        let root: String
        init(root: String) { self.root = root }
        func startClip(preSeconds: Double, label: String) throws(RecorderError) -> Double {
            lock.withLock {
                started.append((preSeconds, label))
                return min(preSeconds, held)
            }
        }
        func endClip() -> [String] {
            lock.withLock {
                ended += 1
                return [root + "/video/20261124/1015\(String(format: "%02d", ended))-\(started.last?.label ?? "x").mp4"]
            }
        }
    }

    private final class Published: @unchecked Sendable {
        let lock = Lock()
        var messages: [EventMessage] = []
        func add(_ message: EventMessage) { lock.withLock { messages.append(message) } }
        var all: [EventMessage] { lock.withLock { messages } }
    }

    /// Counts the wall clock's reads.
    private final class Reads: @unchecked Sendable {
        let lock = Lock()
        var count = 0
        func next() -> Int { lock.withLock { count += 1; return count } }
    }

    /// `wallLag`: each wall reading lands that much later than the one before, against
    /// the monotonic clock beside it (a thread preempted between its two clock reads).
    private func makeRecorder(root: String, configure: (inout Configuration) -> Void = { _ in },
                              snapshot: @escaping @Sendable (String, @escaping @Sendable (String?) -> Void) -> Void = { $1(nil) },
                              level: @escaping @Sendable () -> Double? = { nil }, wallLag: Double = 0)
        -> (EventRecorder, FakeClips, ManualClock, Published) {
        var configuration = Configuration()
        configuration.storage.mediaRoot = root
        configuration.events.mode = .events
        configuration.events.timing = EventTiming(preSeconds: 5, postSeconds: 10, gapSeconds: 0, maxSeconds: 300)
        configure(&configuration)
        let clips = FakeClips(root: root)
        let clock = ManualClock(MonotonicInstant(nanoseconds: 1_000_000_000_000))
        let published = Published()
        // 2026-11-25 10:35:00 UTC when the manual clock reads 1000 s.
        let recorder = EventRecorder(configuration: configuration, clips: clips, clock: clock, logger: Logger(label: "test"),
                                     snapshot: snapshot, soundLevel: level,
                                     wallClock: { [reads = Reads()] in
                                         1_795_602_900 + clock.now().seconds(since: MonotonicInstant(nanoseconds: 1_000_000_000_000))
                                             + wallLag * Double(reads.next())
                                     },
                                     publish: { published.add($0) })
        return (recorder, clips, clock, published)
    }

    func testAManualEventMakesOneClipWithPreTimeAndLogsNewThenEnd() throws {
        let folder = TemporaryDirectory()
        let (recorder, clips, clock, published) = makeRecorder(root: folder.path)
        let id = try XCTUnwrap(recorder.manualTrigger(on: true))
        XCTAssertTrue(id.range(of: #"^\d{8}-\d{6}-1$"#, options: .regularExpression) != nil, id)
        recorder.drain()
        clock.advance(bySeconds: 3)
        XCTAssertEqual(recorder.manualTrigger(on: false), id, "the stop names the event it ends")
        recorder.drain()
        XCTAssertEqual(clips.started.map(\.preSeconds), [5])
        XCTAssertEqual(clips.started.map(\.label), ["manual"])
        XCTAssertEqual(clips.ended, 0, "the clip goes on for post_seconds")
        clock.advance(bySeconds: 9.9)
        recorder.tick()
        recorder.drain()
        XCTAssertEqual(clips.ended, 0)
        clock.advance(bySeconds: 0.2)
        recorder.tick()
        recorder.drain()
        XCTAssertEqual(clips.ended, 1)

        XCTAssertEqual(published.all.map(\.type), [.new, .end])
        let end = try XCTUnwrap(published.all.last)
        XCTAssertEqual(end.id, id)
        XCTAssertEqual(end.clip, "video/20261124/101501-manual.mp4", "relative to the media root")
        XCTAssertEqual((end.end ?? 0) - end.clipStart, 18, accuracy: 0.01, "5 s before, 3 s of trigger, 10 s after")
        XCTAssertEqual(end.start - end.clipStart, 5, accuracy: 0.01)
        let log = EventLogFile(root: folder.path)
        let listing = log.listing(day: String(id.prefix(8)))
        XCTAssertEqual(listing.events, [end], "the log's last line about the event is the end message")
        XCTAssertEqual(recorder.currentStatus.eventsToday, 1)
        XCTAssertEqual(recorder.currentStatus.lastEvent, id)
        XCTAssertFalse(recorder.currentStatus.recording)
    }

    /// The log's times agree with each other however late each wall reading lands:
    /// `clip_start` is exactly `pre_seconds` before the start, the end exactly as long
    /// after it as the event lasted (a loaded guest once logged 3.027 s for 3.0).
    func testTheLogsTimesAreOffsetsFromOneWallReading() throws {
        let folder = TemporaryDirectory()
        let (recorder, _, clock, published) = makeRecorder(root: folder.path, wallLag: 0.027)
        recorder.manualTrigger(on: true)
        recorder.drain()
        clock.advance(bySeconds: 3)
        recorder.manualTrigger(on: false)
        recorder.drain()
        clock.advance(bySeconds: 10.1)
        recorder.tick()
        recorder.drain()
        XCTAssertEqual(published.all.map(\.type), [.new, .end])
        for message in published.all {
            XCTAssertEqual(message.start - message.clipStart, 5, accuracy: 0.0005, "\(message.type)")
        }
        let end = try XCTUnwrap(published.all.last?.end)
        XCTAssertEqual(end - published.all[0].start, 13, accuracy: 0.0005, "3 s of trigger, 10 s after")
    }

    /// Just after start-up the ring holds 2.3 s: the event's clip_start says so, not the
    /// 5 s asked for (which would be before the daemon started).
    func testTheClipStartIsWhereTheRingReallyBegins() throws {
        let folder = TemporaryDirectory()
        let (recorder, clips, _, published) = makeRecorder(root: folder.path)
        clips.lock.withLock { clips.held = 2.3 }
        recorder.manualTrigger(on: true)
        recorder.drain()
        let new = try XCTUnwrap(published.all.first)
        XCTAssertEqual(clips.started.map(\.preSeconds), [5], "the ring is asked for the configured time")
        XCTAssertEqual(new.start - new.clipStart, 2.3, accuracy: 0.01)
    }

    /// A restart keeps "events today" and "last event": they are read from the log.
    func testTodaysCountAndTheLastEventSurviveARestart() throws {
        let folder = TemporaryDirectory()
        do {
            let (recorder, _, clock, _) = makeRecorder(root: folder.path)
            for _ in 0..<2 {
                recorder.manualTrigger(on: true)
                recorder.drain()
                recorder.manualTrigger(on: false)
                clock.advance(bySeconds: 20)
                recorder.tick()
                recorder.drain()
            }
            XCTAssertEqual(recorder.currentStatus.eventsToday, 2)
        }
        // An older day's log and a torn line in today's change nothing.
        let log = EventLogFile(root: folder.path)
        try log.append(EventMessage(type: .new, id: "20261123-235959-1", start: 1_795_550_399, clipStart: 1_795_550_394, triggers: [.manual]), day: "20261123")
        let today = try XCTUnwrap(log.days().last)
        XCTAssertEqual(today, "20261125")
        let handle = try XCTUnwrap(FileHandle(forWritingAtPath: log.path(forDay: today)))
        handle.seekToEndOfFile()
        handle.write(Data("{\"type\":\"new\",\"id\":\"torn".utf8))
        try handle.close()
        let (restarted, _, _, _) = makeRecorder(root: folder.path)
        let status = restarted.currentStatus
        XCTAssertEqual(status.eventsToday, 2)
        XCTAssertEqual(status.lastEvent, log.listing(day: today).events.last?.id)
        XCTAssertEqual(status.lastEventStart ?? 0, 1_795_602_920, accuracy: 0.01, "the second event, 20 s after the first")
        XCTAssertFalse(status.recording)
    }

    func testMotionOnLumaFramesStartsAClipAndTheBestStillReplacesTheLast() throws {
        let folder = TemporaryDirectory()
        let stills = folder.path + "/photo/20261124"
        try FileManager.default.createDirectory(atPath: stills, withIntermediateDirectories: true)
        let counter = Published()
        let (recorder, clips, clock, published) = makeRecorder(root: folder.path, configure: {
            $0.motion.thresholdPercent = 0.5
            $0.motion.minimumFrames = 2
        }, snapshot: { label, done in
            let path = stills + "/still-\(UUID().uuidString.prefix(6))-\(label).jpg"
            FileManager.default.createFile(atPath: path, contents: Data([0xFF, 0xD8]))
            counter.add(EventMessage(type: .new, id: path, start: 0, clipStart: 0, triggers: []))
            done(path)
        })
        func frame(box: Int?) -> LumaFrame {
            var pixels = [UInt8](repeating: 80, count: 160 * 90)
            if let box {
                for y in 30..<(30 + box) { for x in 40..<(40 + box) { pixels[y * 160 + x] = 240 } }
            }
            return LumaFrame(width: 160, height: 90, pixels: pixels, time: clock.now())
        }
        // 2.5 s of the still scene first: the detector's warm-up (2 s) reports nothing.
        for _ in 0..<20 { recorder.observe(frame(box: nil)); clock.advance(bySeconds: 0.125) }
        for size in [12, 12, 20, 28, 28] { recorder.observe(frame(box: size)); clock.advance(bySeconds: 0.125) }
        recorder.drain()
        recorder.drain()   // a saved still comes back to the queue behind the first drain
        XCTAssertEqual(clips.started.map(\.label), ["motion"])
        XCTAssertTrue(recorder.currentStatus.motion)
        XCTAssertGreaterThan(recorder.currentStatus.motionScore, 3)
        let updates = published.all.filter { $0.type == .update }
        XCTAssertEqual(updates.last?.snapshot?.hasPrefix("photo/20261124/still-"), true, "\(updates)")
        XCTAssertEqual(updates.last?.snapshot?.hasSuffix("-motion.jpg"), true, "the still is named with the trigger: \(updates)")
        XCTAssertGreaterThan(updates.last?.peakScore ?? 0, 3)
        let remaining = try FileManager.default.contentsOfDirectory(atPath: stills)
        XCTAssertEqual(remaining.count, 1, "one still per event, the best so far: \(remaining) of \(counter.all.count) taken")
        XCTAssertGreaterThan(counter.all.count, 1, "a higher peak took a new still")
        recorder.stop()
        XCTAssertEqual(clips.ended, 1, "stopping ends the clip going on")
        XCTAssertEqual(published.all.last?.type, .end)
    }

    func testTheSoundTriggerNeedsItsLevelForItsTime() {
        let folder = TemporaryDirectory()
        let level = Published()
        let (recorder, clips, clock, _) = makeRecorder(root: folder.path, configure: {
            $0.events.sound = true
            $0.events.soundDBFS = -20
            $0.events.soundMilliseconds = 300
        }, level: { level.all.isEmpty ? -60 : -10 })
        for _ in 0..<5 { recorder.tick(); clock.advance(bySeconds: 0.1) }
        level.add(EventMessage(type: .new, id: "loud", start: 0, clipStart: 0, triggers: []))
        for _ in 0..<3 { recorder.tick(); clock.advance(bySeconds: 0.1) }
        recorder.drain()
        XCTAssertTrue(clips.started.isEmpty, "200 ms of loud sound is not enough")
        recorder.tick()
        recorder.drain()
        XCTAssertEqual(clips.started.map(\.label), ["sound"])
    }

    /// Shutdown ends the event going on; a trigger still on its way (a luma frame in the
    /// branch's queue, a button) must not start another one after that.
    func testNothingStartsAfterStop() throws {
        let folder = TemporaryDirectory()
        let (recorder, clips, clock, published) = makeRecorder(root: folder.path)
        let id = try XCTUnwrap(recorder.manualTrigger(on: true))
        clock.advance(bySeconds: 2)
        recorder.stop()
        XCTAssertEqual(clips.started.count, 1)
        XCTAssertEqual(clips.ended, 1, "stop ends the clip going on")
        XCTAssertNil(recorder.manualTrigger(on: true), "no event after stop")
        recorder.pulse(.button)
        clock.advance(bySeconds: 1)
        recorder.tick()
        recorder.drain()
        XCTAssertEqual(clips.started.count, 1, "nothing started after stop")
        XCTAssertEqual(published.all.map(\.type), [.new, .end])
        XCTAssertEqual(published.all.last?.id, id)
    }

    func testTriggersThatAreOffDoNothing() {
        let folder = TemporaryDirectory()
        let (recorder, clips, clock, _) = makeRecorder(root: folder.path, configure: { $0.events.motion = false })
        for index in 0..<20 {
            var pixels = [UInt8](repeating: 80, count: 64 * 36)
            if index > 10 { for i in 0..<400 { pixels[i] = 250 } }
            recorder.observe(LumaFrame(width: 64, height: 36, pixels: pixels, time: clock.now()))
            clock.advance(bySeconds: 0.125)
        }
        recorder.drain()
        XCTAssertTrue(clips.started.isEmpty)
        XCTAssertEqual(recorder.currentStatus.motionScore, 0)
    }
}
