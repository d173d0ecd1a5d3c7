import Glibc
import KioskALSA
import KioskCore
import KioskMedia
import KioskSources

/// Plays one recording for the media view: the sound through ALSA on its own thread (the
/// master clock: the frames the card has played), the picture decoded on another,
/// scaled to the panel and handed to `present` when the clock reaches it — dropped when
/// late, held when early (`AVSyncPolicy`), never the sound. Without sound (a video with
/// no audio track) the monotonic clock stands in.
///
/// Seeking stops the sound, moves both decoders to the keyframe before the target and
/// decodes forward; the picture shows again from the target. `stop()` ends both threads
/// and closes the sound card before it returns.
public final class MediaPlayer: Sendable {
    /// What the media view shows of playback.
    public struct Status: Sendable, Equatable {
        public var position: Double = 0
        public var duration: Double?
        public var paused = false
        /// Both the picture and the sound reached the end.
        public var ended = false
        public var framesShown = 0
        public var framesDropped = 0
        public var underruns = 0
        /// Why playback stopped early (a damaged file, the sound card gone).
        public var failure: String?
        /// Milliseconds from `start()` to the first picture handed to `present`.
        public var firstFrameMilliseconds: Double?
        /// How far each shown picture was from the clock once it was on the panel
        /// (after `present` returned), in milliseconds: the mean and the largest.
        public var syncOffsetMeanMilliseconds: Double?
        public var syncOffsetMaxMilliseconds: Double?
    }

    /// Hands on one picture: `bgrx` pixels (cairo RGB24 memory), its size.
    public typealias Present = @Sendable (UnsafeRawBufferPointer, FrameSize) -> Void

    public let path: String
    public let kind: MediaKind
    private let audioDevice: String
    private let pictureArea: FrameSize
    private let present: Present

    private struct State {
        var clock = PlaybackClock()
        var status = Status()
        /// The sound's player while one plays, for its frame count and pause.
        var sound: ALSAPlayer?
        var soundRate = 0
        var hasSound = false
        var soundDone = false
        var videoDone = false
        /// Bumped by every seek: a thread working on an older one starts again.
        var generation = 0
        var seekTarget: Double?
        var stopRequested = false
        var startedAt: MonotonicInstant?
        var offsetSum = 0.0
        /// How long handing a picture to the panel takes (a moving average), so a picture
        /// is judged against the clock at the moment it will be out, not before drawing.
        var presentSeconds = 0.0
    }

    private let state = Locked(State())
    private let threads = ThreadGroup()
    private let clock = SystemClock()

    /// - Parameters:
    ///   - path: The recording.
    ///   - kind: `.video` or `.audio`.
    ///   - audioDevice: The ALSA playback device (`default`, `hw:Loopback,0,0`, `null`).
    ///   - pictureArea: The panel's picture area: pictures are handed on fitted into it
    ///     with their aspect kept (the caller letter-boxes them).
    ///   - present: Called on the picture thread with each picture to show.
    public init(path: String, kind: MediaKind, audioDevice: String, pictureArea: FrameSize, present: @escaping Present) {
        self.path = path
        self.kind = kind
        self.audioDevice = audioDevice
        self.pictureArea = pictureArea
        self.present = present
    }

    deinit { stop() }

    public var status: Status {
        state.withLock { state in
            var status = state.status
            status.position = Self.position(state, now: clock.now())
            if let sound = state.sound { status.underruns += sound.underruns }
            status.paused = state.clock.isPaused
            status.ended = state.soundDone && state.videoDone
            return status
        }
    }

    /// Opens the file and starts the threads.
    /// - Throws: `MediaError.invalidInput` naming the file when it has neither picture
    ///   nor sound we can decode.
    public func start() throws(MediaError) {
        let video: VideoFileDecoder? = kind.isMovie ? try VideoFileDecoder(path: path) : nil
        let sound: AudioFileDecoder?
        do throws(MediaError) {
            sound = try AudioFileDecoder(path: path)
        } catch where kind.isMovie {
            sound = nil  // a video without a sound track plays on the monotonic clock
        }
        let now = clock.now()
        state.withLock { state in
            state.startedAt = now
            state.hasSound = sound != nil
            state.soundDone = sound == nil
            state.videoDone = video == nil
            state.status.duration = video?.durationSeconds ?? sound?.expectedSeconds
            state.clock.restart(at: 0, now: now)
        }
        if let sound {
            let handoff = Handoff(sound)
            threads.start(name: "kioskcam.play.sound") { [self] in playSound(first: handoff.value) }
        }
        if let video {
            let handoff = Handoff(video)
            threads.start(name: "kioskcam.play.picture") { [self] in showPictures(handoff.value) }
        }
    }

    public func togglePause() {
        let now = clock.now()
        let sound = state.withLock { state -> ALSAPlayer? in
            if state.clock.isPaused { state.clock.resume(now: now) } else { state.clock.pause(now: now) }
            return state.sound
        }
        guard let sound else { return }
        if sound.isPaused { sound.resume() } else { sound.pause() }
    }

    /// Plays on from `seconds` (clamped to the recording).
    public func seek(to seconds: Double) {
        let now = clock.now()
        let sound = state.withLock { state -> ALSAPlayer? in
            var target = seconds.isFinite ? max(0, seconds) : 0
            if let duration = state.status.duration { target = min(target, duration) }
            state.generation += 1
            state.seekTarget = target
            state.clock.restart(at: target, now: now)
            state.soundDone = !state.hasSound
            state.videoDone = !kind.isMovie
            return state.sound
        }
        sound?.stop()
    }

    /// Ends playback and waits for both threads (the sound card is closed on return).
    public func stop() {
        let sound = state.withLock { state -> ALSAPlayer? in
            state.stopRequested = true
            return state.sound
        }
        sound?.stop()
        _ = threads.wait()
    }

    // MARK: The clock

    private static func position(_ state: State, now: MonotonicInstant) -> Double {
        if state.hasSound, let sound = state.sound, !state.soundDone {
            // The card's count rules, but never ahead of the time since the (re)start: a
            // device that does not pace (ALSA's `null`, a file) would otherwise run the
            // picture at decoding speed.
            let heard = state.clock.audioTime(playedFrames: sound.playedFrames, sampleRate: state.soundRate)
            return min(heard, state.clock.wallTime(now: now))
        }
        // Without sound, after it ended, or between a seek and the new player: the time.
        var time = state.clock.wallTime(now: now)
        if let duration = state.status.duration { time = min(time, duration) }
        return time
    }

    // MARK: Sound thread

    private func playSound(first: AudioFileDecoder) {
        var decoder: AudioFileDecoder? = first
        while true {
            let (generation, from, stop) = state.withLock { ($0.generation, $0.seekTarget ?? 0, $0.stopRequested) }
            if stop { return }
            do throws(MediaError) {
                let current: AudioFileDecoder
                if let decoder { current = decoder } else { current = try AudioFileDecoder(path: path) }
                decoder = nil
                try playSound(current, from: from, generation: generation)
            } catch {
                fail("\(error)")
                return
            }
            // Ended (or stopped for a seek): wait for a seek or the stop.
            while true {
                let (now, stop) = state.withLock { ($0.generation, $0.stopRequested) }
                if stop { return }
                if now != generation { break }
                usleep(20_000)
            }
        }
    }

    private func playSound(_ decoder: AudioFileDecoder, from: Double, generation: Int) throws(MediaError) {
        let player: ALSAPlayer
        do throws(ALSAError) {
            player = try ALSAPlayer(device: audioDevice, format: AudioFormat(sampleRate: decoder.sampleRate,
                                                                             channels: decoder.channelCount))
        } catch {
            fail("\(error)")
            return
        }
        let paused = state.withLock { state -> Bool in
            state.sound = player
            state.soundRate = player.format.sampleRate
            state.clock.restart(at: from, now: clock.now())
            return state.clock.isPaused
        }
        if paused { player.pause() }
        var failure: ALSAError?
        try decoder.decodeInterleavedS16(from: from) { samples in
            do throws(ALSAError) {
                return try player.write(samples)
            } catch {
                failure = error
                return false
            }
        }
        let end = (try? player.finish()) ?? .stopped
        // A device that does not pace has "played" everything at once: the end comes
        // when the time since the (re)start reaches what was played.
        let played = state.withLock { $0.clock.audioTime(playedFrames: player.playedFrames, sampleRate: player.format.sampleRate) }
        while end == .finished, state.withLock({ $0.generation == generation && !$0.stopRequested
            && $0.clock.wallTime(now: clock.now()) < played }) {
            usleep(10_000)
        }
        state.withLock { state in
            // The clock goes on from where the sound ended, on the monotonic clock.
            let heard = min(played, state.clock.wallTime(now: clock.now()))
            state.status.underruns += player.underruns
            state.sound = nil
            guard state.generation == generation else { return }
            state.clock.restart(at: heard, now: clock.now())
            if end == .finished { state.soundDone = true }
        }
        if let failure { fail("\(failure)") }
    }

    // MARK: Picture thread

    private func showPictures(_ decoder: VideoFileDecoder) {
        let fitted = MediaViewLayout.fitted(decoder.size, in: ScreenRect(x: 0, y: 0, width: pictureArea.width, height: pictureArea.height))
        let pictureSize = fitted.isEmpty ? FrameSize(width: 2, height: 2) : FrameSize(width: fitted.width, height: fitted.height)
        let policy = AVSyncPolicy(frameSeconds: 1 / Double(max(1, decoder.framesPerSecond)))
        var generation = 0
        while true {
            let seek = state.withLock { state -> (Int, Double?, Bool) in
                (state.generation, state.seekTarget, state.stopRequested)
            }
            if seek.2 { return }
            do throws(MediaError) {
                if seek.0 != generation, let target = seek.1 {
                    try decoder.seek(to: target)
                }
                generation = seek.0
                try decoder.decode(scaledTo: pictureSize, layout: .bgrx) { picture, time in
                    decide(picture, size: pictureSize, at: time, policy: policy, generation: generation)
                }
            } catch {
                fail("\(error)")
                return
            }
            // The end, or a seek or stop cut the pass short.
            let again = state.withLock { state -> Bool in
                if state.generation == generation && !state.stopRequested { state.videoDone = true }
                return state.generation != generation || state.stopRequested
            }
            if !again {
                while state.withLock({ $0.generation == generation && !$0.stopRequested }) { usleep(20_000) }
            }
        }
    }

    /// Shows, drops or holds one picture; false ends the pass (a seek or stop).
    private func decide(_ picture: UnsafeRawBufferPointer, size pictureSize: FrameSize, at time: Double, policy: AVSyncPolicy, generation: Int) -> Bool {
        while true {
            let now = clock.now()
            let (current, stop, target, position) = state.withLock { state in
                (state.generation, state.stopRequested, state.seekTarget,
                 Self.position(state, now: now) + (state.clock.isPaused ? 0 : state.presentSeconds))
            }
            if stop || current != generation { return false }
            switch policy.decide(frameTime: time, clock: position, seekTarget: target) {
            case .drop:
                // Before a seek's target a picture is only decoded through, not counted.
                if target.map({ time >= $0 - policy.lateSeconds }) ?? true {
                    state.withLock { $0.status.framesDropped += 1 }
                }
                return true
            case .hold(let seconds):
                usleep(useconds_t(max(1_000, seconds * 1e6)))
            case .show:
                // Paused, the clock stands: the picture at it shows (after a seek too), the next waits.
                present(picture, pictureSize)
                let shownAt = clock.now()
                state.withLock { state in
                    let took = min(0.5, max(0, shownAt.seconds(since: now)))
                    state.presentSeconds = state.status.framesShown == 0 ? took : state.presentSeconds * 0.8 + took * 0.2
                    // The clock once the picture is out: what a viewer sees against what is heard.
                    let offset = abs(time - Self.position(state, now: shownAt)) * 1000
                    state.offsetSum += offset
                    state.status.syncOffsetMaxMilliseconds = max(state.status.syncOffsetMaxMilliseconds ?? 0, offset)
                    state.status.syncOffsetMeanMilliseconds = state.offsetSum / Double(state.status.framesShown + 1)
                    if state.status.firstFrameMilliseconds == nil, let started = state.startedAt {
                        state.status.firstFrameMilliseconds = Double(shownAt.nanoseconds(since: started)) / 1e6
                    }
                    state.status.framesShown += 1
                }
                return true
            }
        }
    }

    private func fail(_ message: String) {
        state.withLock { state in
            if state.status.failure == nil { state.status.failure = message }
            state.soundDone = true
            state.videoDone = true
        }
    }
}

/// A decoder opened on the caller's thread (so `start()` reports a bad file at once) and
/// handed to the one thread that uses it from then on.
// @unchecked: the value is touched by exactly one thread after the handoff.
private final class Handoff<Value>: @unchecked Sendable {
    let value: Value
    init(_ value: Value) { self.value = value }
}
