import Foundation
import KioskCore
import KioskMedia
import KioskSources
import KioskTestSupport
import Logging
import XCTest

@testable import KioskRecording

/// The pipeline end to end on real sources, real encoders and real files.
final class RecorderTests: XCTestCase {
    let format = VideoFormat(size: FrameSize(width: 320, height: 240), pixelFormat: .yuyv, framesPerSecond: 30)
    let logger = Logger(label: "test")

    /// Raw frames rendered by the test pattern, numbered so each is distinct.
    func writeRawFrames(_ path: String, count: Int) throws {
        let renderer = TestPatternRenderer(format: format)
        var data = Data(capacity: count * format.frameByteCount)
        var pixels = [UInt8](repeating: 0, count: format.frameByteCount)
        for index in 0..<count {
            pixels.withUnsafeMutableBytes { renderer.render(into: $0, sequence: index, caption: []) }
            data.append(contentsOf: pixels)
        }
        try data.write(to: URL(fileURLWithPath: path))
    }

    func settings(root: String, segments: SegmentPolicy = SegmentPolicy(maximumSeconds: nil), audio: Bool = true) -> RecorderSettings {
        RecorderSettings(layout: LibraryLayout(root: root),
                         video: VideoTrackSettings(input: format, preset: "ultrafast"),
                         audio: audio ? AudioTrackSettings(input: AudioFormat(sampleRate: 48_000, channels: 1)) : nil,
                         segmentPolicy: segments)
    }

    /// Replays `frames` frames (and a WAV as long) as fast as possible and records them all.
    func recordReplay(root: String, frames: Int, segments: SegmentPolicy, folder: TemporaryDirectory) throws -> (Recorder, RecorderStatus) {
        let raw = folder.path + "/frames.yuv"
        let wav = folder.path + "/sound.wav"
        try writeRawFrames(raw, count: frames)
        try TestMedia.writeWAV(wav, seconds: Double(frames) / 30 + 0.5)
        let ended = DispatchSemaphore(value: 0)
        let recorder = Recorder(settings: settings(root: root, segments: segments), clock: SystemClock(), logger: logger,
                                overflow: .block) { event in
            if case .sourceEnded(_, .endOfInput) = event { ended.signal() }
        }
        let camera = try RawFileCamera(path: raw, format: format, realtime: false)
        let microphone = try WAVFileMicrophone(path: wav, realtime: false)
        try recorder.start()
        camera.start(into: recorder)
        microphone.start(into: recorder)
        XCTAssertEqual(ended.wait(timeout: .now() + 60), .success, "the raw file should end")
        try recorder.stop(.afterQueuedInput)
        XCTAssertEqual(recorder.waitUntilIdle(timeout: 60), .idle)
        camera.stop()
        microphone.stop()
        let status = recorder.status
        recorder.shutdown()
        return (recorder, status)
    }

    func testSegmentsTogetherHoldEveryFrame() throws {
        let folder = TemporaryDirectory()
        let root = folder.path + "/media"
        let (_, status) = try recordReplay(root: root, frames: 100, segments: SegmentPolicy(maximumSeconds: 1), folder: folder)
        XCTAssertNil(status.lastError)
        XCTAssertEqual(status.finishedFiles.count, 4, "100 frames at 30 fps cut every second: 30+30+30+10")
        var total = 0
        var audioSeconds = 0.0
        for file in status.finishedFiles {
            XCTAssertTrue(file.hasPrefix(root + "/video/"), file)
            XCTAssertTrue(file.hasSuffix(".mp4"), file)
            let probe = try FFprobe.probe(file)
            let video = try XCTUnwrap(probe.video)
            total += video.frameCount
            audioSeconds += try XCTUnwrap(probe.audio).durationSeconds
            XCTAssertEqual(video.startSeconds, probe.audio?.startSeconds ?? -1, accuracy: 1.0 / 30, file)
        }
        XCTAssertEqual(total, 100, "no frame may be lost or repeated across segment cuts")
        // Each file may end on a padded AAC frame (≤ 1024 samples, 21 ms). And the 20 ms sound
        // chunk that straddles a cut goes whole into the earlier file: the cut is known only
        // when the next frame comes, after that chunk was written. How much it straddles
        // depends on when the file camera and the WAV started their time lines, so a loaded
        // machine (the sanitizer runs) sees up to 20 ms more per cut.
        XCTAssertGreaterThanOrEqual(audioSeconds, 100.0 / 30 - 4 * 0.022, "audio is split at the cuts, not lost")
        XCTAssertLessThanOrEqual(audioSeconds, 100.0 / 30 + 4 * 0.022 + 3 * 0.020, "no more than padding and a chunk per cut")
        XCTAssertEqual(Set(status.finishedFiles).count, 4, "four distinct names even within one second")
        XCTAssertTrue(try FileManager.default.contentsOfDirectory(atPath: root + "/.incoming").isEmpty)
    }

    func testSegmentsBySize() throws {
        let folder = TemporaryDirectory()
        let root = folder.path + "/media"
        let (_, status) = try recordReplay(root: root, frames: 90, segments: SegmentPolicy(maximumSeconds: nil, maximumBytes: 12_000), folder: folder)
        XCTAssertGreaterThan(status.finishedFiles.count, 1)
        var total = 0
        for file in status.finishedFiles {
            let size = try XCTUnwrap(FileManager.default.attributesOfItem(atPath: file)[.size] as? Int)
            // The sound after the video's end has a fragment of its own (since the video is
            // written out at the cut): ~100 bytes more than before, on sizes up to 15.9 kB.
            XCTAssertLessThan(size, 12_000 + 4_500, "cuts come before the limit is passed, give or take one frame, the sound tail and the trailer")
            total += try XCTUnwrap(FFprobe.probe(file).video).frameCount
        }
        XCTAssertEqual(total, 90)
    }

    /// "Stop now" keeps what was captured before now: frames still inside the encoder (its
    /// lookahead) when the stop is taken belong to the file, as the sound of the same
    /// moments does. Under the sanitizers (scripts/sanitize) a stop often finds frames
    /// not yet encoded, and the video came out shorter than its sound. A manual clock
    /// pins the stop to just after the last frame, whatever the machine's speed.
    func testFramesCapturedBeforeAStopAreRecorded() throws {
        let folder = TemporaryDirectory()
        let clock = ManualClock(MonotonicInstant(nanoseconds: 5_000_000_000))
        let recorder = Recorder(settings: settings(root: folder.path + "/media"), clock: clock, logger: logger, overflow: .block)
        defer { recorder.shutdown() }
        let start = clock.now()
        let renderer = TestPatternRenderer(format: format)
        func frame(_ index: Int) -> VideoFrame {
            let buffer = MediaBuffer(capacity: format.frameByteCount)
            renderer.render(into: buffer.mutableBytes, sequence: index, caption: [])
            buffer.byteCount = format.frameByteCount
            return VideoFrame(buffer: buffer, format: format, timestamp: start.advanced(byNanoseconds: Int64(index) * 1_000_000_000 / 30),
                              sequence: index)
        }
        let audioFormat = AudioFormat(sampleRate: 48_000, channels: 1)
        func chunk(_ index: Int) -> AudioChunk {
            let buffer = MediaBuffer(capacity: 960 * audioFormat.bytesPerFrame)  // 20 ms of silence
            buffer.mutableBytes.initializeMemory(as: UInt8.self, repeating: 0)
            buffer.byteCount = buffer.capacity
            return AudioChunk(buffer: buffer, format: audioFormat, timestamp: start.advanced(byNanoseconds: Int64(index) * 20_000_000))
        }

        try recorder.start()
        // Frames (and the sound of the same moments) until the first packets leave the
        // encoder and the file opens; the frames after them are still inside it.
        var frames = 0, chunks = 0
        let deadline = Date(timeIntervalSinceNow: 20)
        while recorder.status.state != .recording, frames < 150, Date() < deadline {
            recorder.deliver(frame(frames))
            frames += 1
            while chunks * 20 < frames * 1000 / 30 { recorder.deliver(chunk(chunks)); chunks += 1 }
            Thread.sleep(forTimeInterval: 0.01)
        }
        XCTAssertEqual(recorder.status.state, .recording)
        clock.advance(byNanoseconds: Int64(frames) * 1_000_000_000 / 30)
        try recorder.stop()
        for index in chunks..<(chunks + 10) { recorder.deliver(chunk(index)) }  // sound past the stop
        recorder.videoSourceEnded("test", .endOfInput)
        XCTAssertEqual(recorder.waitUntilIdle(timeout: 10), .idle)

        let file = try XCTUnwrap(recorder.status.finishedFiles.first)
        let probe = try FFprobe.probe(file)
        XCTAssertEqual(probe.video?.frameCount, frames, "every frame captured before the stop is in the file")
    }

    func testIllegalTransitionsAreErrorsNotCrashes() throws {
        let folder = TemporaryDirectory()
        let recorder = Recorder(settings: settings(root: folder.path), clock: SystemClock(), logger: logger)
        defer { recorder.shutdown() }
        XCTAssertThrowsError(try recorder.stop()) { XCTAssertTrue("\($0)".contains("not recording"), "\($0)") }
        try recorder.start()
        XCTAssertEqual(recorder.status.state, .starting)
        XCTAssertThrowsError(try recorder.start()) { XCTAssertTrue("\($0)".contains("already recording"), "\($0)") }
        // Stopping before any frame arrived writes nothing and returns to idle.
        try recorder.stop()
        XCTAssertEqual(recorder.waitUntilIdle(timeout: 5), .idle)
        XCTAssertTrue(folder.files().isEmpty, "no frame arrived, so no file: \(folder.files())")
    }

    /// The defect: while the camera was lost every press added a waiter that never got a
    /// frame. Waiters are bounded, and each fails by its deadline with a clear message.
    func testStillsWithoutFramesAreBoundedAndTimeOut() throws {
        let folder = TemporaryDirectory()
        let recorder = Recorder(settings: settings(root: folder.path), clock: SystemClock(), logger: logger)
        defer { recorder.shutdown() }
        let results = StillResults()
        let asked = Date()
        for _ in 0..<(StillBranch.maximumWaiters + 3) {
            recorder.snapshot(timeout: 0.5) { results.append($0, after: Date().timeIntervalSince(asked)) }
        }
        // The ones over the bound fail at once.
        XCTAssertEqual(results.count, 3)
        XCTAssertTrue(results.all.allSatisfy { "\($0.result)".contains("already waiting") }, "\(results.all)")
        let deadline = Date(timeIntervalSinceNow: 5)
        while results.count < StillBranch.maximumWaiters + 3 && Date() < deadline { Thread.sleep(forTimeInterval: 0.02) }
        XCTAssertEqual(results.count, StillBranch.maximumWaiters + 3, "every waiter is answered")
        let timedOut = results.all.dropFirst(3)
        XCTAssertTrue(timedOut.allSatisfy { "\($0.result)".contains("no frame came from the camera") }, "\(timedOut)")
        XCTAssertTrue(timedOut.allSatisfy { (0.45...2.0).contains($0.seconds) }, "answered at the deadline: \(timedOut.map(\.seconds))")
        // A new still is accepted again once the old ones are answered.
        recorder.snapshot(timeout: 0.1) { results.append($0, after: 0) }
        while results.count < StillBranch.maximumWaiters + 4 && Date() < deadline { Thread.sleep(forTimeInterval: 0.02) }
        XCTAssertTrue("\(results.all.last?.result as Any)".contains("no frame came"))
    }

    func testUnwritableRootIsAClearError() throws {
        let recorder = Recorder(settings: settings(root: "/proc/kioskcam-cannot-exist"), clock: SystemClock(), logger: logger)
        defer { recorder.shutdown() }
        XCTAssertThrowsError(try recorder.start()) { error in
            XCTAssertTrue("\(error)".contains("/proc/kioskcam-cannot-exist"), "\(error)")
        }
        XCTAssertEqual(recorder.status.state, .idle)
    }

    func testLiveRecordingWithStillFromTheSameFrames() throws {
        let folder = TemporaryDirectory()
        let root = folder.path + "/media"
        let recorder = Recorder(settings: settings(root: root), clock: SystemClock(), logger: logger)
        let camera = TestPatternCamera(format: format)
        let microphone = ToneMicrophone(format: AudioFormat(sampleRate: 48_000, channels: 1), frequency: 440)
        camera.start(into: recorder)
        microphone.start(into: recorder)
        try recorder.start()
        let still = DispatchSemaphore(value: 0)
        let stillPath = ResultBox()
        recorder.snapshot { result in
            stillPath.value = try? result.get()
            still.signal()
        }
        XCTAssertEqual(still.wait(timeout: .now() + 5), .success)
        XCTAssertTrue(waitUntil(30) { recorder.status.secondsWritten > 0.5 }, "waited for 0.5 s written: \(recorder.status)")
        XCTAssertEqual(recorder.status.state, .recording)
        XCTAssertGreaterThan(recorder.status.bytesWritten, 0, "bytes are reported live")
        XCTAssertGreaterThan(recorder.status.secondsWritten, 0.5, "seconds are reported live")
        try recorder.stop()
        XCTAssertEqual(recorder.waitUntilIdle(timeout: 10), .idle)
        camera.stop()
        microphone.stop()
        let status = recorder.status
        recorder.shutdown()

        let file = try XCTUnwrap(status.finishedFiles.first)
        let probe = try FFprobe.probe(file)
        let video = try XCTUnwrap(probe.video), audio = try XCTUnwrap(probe.audio)
        XCTAssertEqual(video.durationSeconds, Double(video.frameCount) / 30, accuracy: 2.0 / 30)
        // Each ends with its last packet before the stop: the video's last frame lasts up to
        // 1/30 s past it, the sound's last AAC frame up to 1024 samples.
        XCTAssertEqual(audio.startSeconds + audio.durationSeconds, video.startSeconds + video.durationSeconds,
                       accuracy: 1.0 / 30 + 1024.0 / 48_000, "audio ends with the video")
        XCTAssertEqual(video.startSeconds, audio.startSeconds, accuracy: 1.0 / 30, "audio starts with the first frame")
        let photo = try XCTUnwrap(stillPath.value)
        XCTAssertTrue(photo.hasPrefix(root + "/photo/") && photo.hasSuffix(".jpg"), photo)
        XCTAssertEqual(try FFprobe.probe(photo, countFrames: false).video?.codec_name, "mjpeg")
    }

    func testAudioOnlyRecording() throws {
        let folder = TemporaryDirectory()
        let root = folder.path + "/media"
        var audioOnly = settings(root: root)
        audioOnly.video = nil
        let recorder = Recorder(settings: audioOnly, clock: SystemClock(), logger: logger)
        let microphone = ToneMicrophone(format: AudioFormat(sampleRate: 48_000, channels: 1), frequency: 440)
        microphone.start(into: recorder)
        try recorder.start()
        Thread.sleep(forTimeInterval: 1.2)
        try recorder.stop()
        XCTAssertEqual(recorder.waitUntilIdle(timeout: 10), .idle)
        microphone.stop()
        let status = recorder.status
        recorder.shutdown()
        let file = try XCTUnwrap(status.finishedFiles.first)
        XCTAssertTrue(file.hasPrefix(root + "/audio/") && file.hasSuffix(".m4a"), file)
        let probe = try FFprobe.probe(file)
        XCTAssertNil(probe.video)
        XCTAssertEqual(probe.audio?.codec_name, "aac")
        XCTAssertGreaterThan(probe.format.durationSeconds, 0.8)
    }

    /// A crash leaves a temp file without a trailer; start-up salvage makes it playable
    /// and moves it under the name it would have had.
    func testSalvageMovesAnInterruptedRecordingIntoTheLibrary() throws {
        let folder = TemporaryDirectory()
        let layout = LibraryLayout(root: folder.path + "/media")
        let files = LibraryFiles(layout: layout)
        try files.prepare()
        let time = LocalTimestamp(year: 2026, month: 3, day: 4, hour: 5, minute: 6, second: 7)
        let temp = layout.incomingPath(.video, time)
        let writer = try MP4Writer(settings: MP4WriterSettings(path: temp, video: VideoTrackSettings(input: format), audio: nil))
        let renderer = TestPatternRenderer(format: format)
        var pixels = [UInt8](repeating: 0, count: format.frameByteCount)
        for index in 0..<75 {
            pixels.withUnsafeMutableBytes { renderer.render(into: $0, sequence: index, caption: []) }
            try pixels.withUnsafeBytes { try writer.writeVideo($0, nanosecondsFromStart: Int64(index) * 33_333_333) }
        }
        writer.abandon()  // like a kill -9: no trailer
        // Tear the tail as a power cut would.
        let handle = try XCTUnwrap(FileHandle(forUpdatingAtPath: temp))
        handle.truncateFile(atOffset: handle.seekToEndOfFile() - 100)
        handle.closeFile()
        // Junk in the temp area is reported, not deleted.
        try Data("x".utf8).write(to: URL(fileURLWithPath: layout.incomingDirectory + "/notes.txt"))

        let results = IncomingSalvage(files: files, logger: logger).salvageAll()
        XCTAssertEqual(results.count, 2)
        let recovered = results.compactMap { result -> String? in
            if case .recovered(let path, _) = result.outcome { return path } else { return nil }
        }
        XCTAssertEqual(recovered, [layout.finalPath(.video, time)])
        let probe = try FFprobe.probe(layout.finalPath(.video, time))
        XCTAssertEqual(probe.video?.frameCount, 30, "fragment 1 survives; the torn fragment 2 is cut off; frames 60… never left memory")
        XCTAssertTrue(FileManager.default.fileExists(atPath: layout.incomingDirectory + "/notes.txt"))
        XCTAssertFalse(FileManager.default.fileExists(atPath: temp))
    }

    func testEmptyLeftoverIsDiscarded() throws {
        let folder = TemporaryDirectory()
        let layout = LibraryLayout(root: folder.path + "/media")
        let files = LibraryFiles(layout: layout)
        try files.prepare()
        let temp = layout.incomingPath(.audio, LocalTimestamp(year: 2026, month: 1, day: 1))
        XCTAssertTrue(FileManager.default.createFile(atPath: temp, contents: Data()))
        let results = IncomingSalvage(files: files, logger: logger).salvageAll()
        guard case .discarded = results.first?.outcome else { return XCTFail("\(results)") }
        XCTAssertFalse(FileManager.default.fileExists(atPath: temp))
        XCTAssertFalse(FileManager.default.fileExists(atPath: layout.kindDirectory(.audio)))
    }

    /// A real full disk (a 1.5 MiB tmpfs): the recording ends with a clear error and what
    /// was written stays playable in the library; nothing half-written is left.
    func testDiskFullKeepsAPlayableFile() throws {
        let folder = TemporaryDirectory()
        let mountPoint = folder.path + "/tiny"
        try FileManager.default.createDirectory(atPath: mountPoint, withIntermediateDirectories: true)
        let mounted = try Tool.run("mount", ["-t", "tmpfs", "-o", "size=1536k", "tmpfs", mountPoint], allowFailure: true)
        guard mounted.status == 0 else { throw XCTSkip("cannot mount a tmpfs here (\(mounted.stderr)); mounting needs root: run the tests as root to cover this") }
        defer { _ = try? Tool.run("umount", [mountPoint], allowFailure: true) }

        // Noisy frames so the file grows fast.
        let raw = folder.path + "/noise.yuv"
        var generator = SystemRandomNumberGenerator()
        var noise = Data(count: format.frameByteCount * 60)
        noise.withUnsafeMutableBytes { raw in for i in 0..<raw.count { raw[i] = UInt8.random(in: 16...235, using: &generator) } }
        try noise.write(to: URL(fileURLWithPath: raw))

        let failed = DispatchSemaphore(value: 0)
        let failure = ResultBox()
        var fast = settings(root: mountPoint + "/media", audio: false)
        fast.video?.bitrate = 2_000_000  // ~250 kB fragments: several fit before the disk is full
        let recorder = Recorder(settings: fast, clock: SystemClock(), logger: logger, overflow: .block) { event in
            if case .failed(let error) = event { failure.value = error.description; failed.signal() }
        }
        defer { recorder.shutdown() }
        // Loop the noise until the disk is full.
        try recorder.start()
        var cameras: [RawFileCamera] = []
        var sawFailure = false
        for _ in 0..<20 where !sawFailure {
            let camera = try RawFileCamera(path: raw, format: format, realtime: false)
            cameras.append(camera)
            camera.start(into: recorder)
            sawFailure = failed.wait(timeout: .now() + 3) == .success
            camera.stop()
        }
        XCTAssertTrue(sawFailure, "the disk should have filled")
        XCTAssertTrue(failure.value?.contains("full") ?? false, failure.value ?? "no message")
        XCTAssertEqual(recorder.waitUntilIdle(timeout: 10), .idle)
        let files = recorder.status.finishedFiles
        XCTAssertEqual(files.count, 1, "the interrupted recording is kept: \(files)")
        for file in files {
            XCTAssertGreaterThan(try XCTUnwrap(FFprobe.probe(file).video).frameCount, 0)
        }
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: mountPoint + "/media/.incoming")
        XCTAssertTrue(leftovers.isEmpty, "nothing half-written stays behind: \(leftovers)")
    }
}

final class ResultBox: @unchecked Sendable {
    private let lock = Lock()
    private var stored: String?
    var value: String? {
        get { lock.withLock { stored } }
        set { lock.withLock { stored = newValue } }
    }
}

/// Still results collected from the encoder thread.
private final class StillResults: @unchecked Sendable {
    private let lock = NSLock()
    private var stored: [(result: Result<String, RecorderError>, seconds: Double)] = []
    func append(_ result: Result<String, RecorderError>, after seconds: Double) { lock.withLock { stored.append((result, seconds)) } }
    var all: [(result: Result<String, RecorderError>, seconds: Double)] { lock.withLock { stored } }
    var count: Int { lock.withLock { stored.count } }
}
