import Dispatch
import Foundation
import KioskCore
import KioskMedia
import Logging

/// Stills: the next frame after a request, JPEG-encoded on a queue of its own (never the
/// capture thread, never the encoder's) and saved in the library. The frame is taken by
/// reference. Requests are bounded and each fails by its deadline when no frame comes
/// (a lost camera), so nothing piles up.
public final class StillBranch: CaptureBranch, Sendable {
    /// Requests waiting for a frame, at most: every waiter gets the same next frame, so
    /// more would only pile up while no frame comes.
    public static let maximumWaiters = 8

    private let files: LibraryFiles
    private let quality: Int
    /// Stills are turned upright (`camera.rotation`, `camera.mirror`).
    private let orientation: PictureOrientation
    /// Written into each still's EXIF with the time it was taken.
    private let deviceID: String?
    private let software: String?
    /// The overlay, drawn by the stills' queue (its stamp lives beside the JPEG encoder).
    private let overlay: OverlaySpec?
    private let logger: Logger
    private let onSaved: @Sendable (String) -> Void
    private let queue = DispatchQueue(label: "kioskcam.stills", qos: .userInitiated)
    private let clock: MonotonicClock
    private struct State {
        var waiters: [Waiter] = []
        /// Asked for the JPEG's bytes only (the web app's snapshot.jpg): nothing is saved.
        var viewers: [Viewer] = []
        var sequence = 0
    }
    private let state = Locked(State())
    /// Used on `queue` only, so its lock is never contended; kept for the next still.
    private let encoder = Locked<(jpeg: JPEGEncoder?, overlay: OverlayStamp?)>((nil, nil))

    private struct Waiter {
        var id: Int
        var deadline: MonotonicInstant
        var label: String?
        var completion: @Sendable (Result<String, RecorderError>) -> Void
    }

    private struct Viewer {
        var id: Int
        var completion: @Sendable (Result<[UInt8], RecorderError>) -> Void
    }

    /// - Parameters:
    ///   - orientation: How the camera is mounted; stills are turned upright.
    ///   - deviceID: The device id for each still's EXIF; `software` its writer ("kioskcam 1.4.0").
    ///   - onSaved: Told each saved still's library path.
    public init(files: LibraryFiles, quality: Int, orientation: PictureOrientation = .upright, deviceID: String? = nil,
                software: String? = nil, overlay: OverlaySpec? = nil, clock: MonotonicClock, logger: Logger,
                onSaved: @escaping @Sendable (String) -> Void = { _ in }) {
        self.files = files
        self.quality = quality
        self.orientation = orientation
        self.deviceID = deviceID
        self.software = software
        self.overlay = overlay
        self.clock = clock
        self.logger = logger
        self.onSaved = onSaved
    }

    /// Saves the next frame as a JPEG.
    /// - Parameters:
    ///   - timeout: Seconds to wait for a frame; then `completion` gets `.snapshotFailed`.
    ///   - label: Goes into the file's name (`HHMMSS-motion.jpg`): an event's still.
    ///   - completion: Called once, on the stills queue (or at once when too many wait).
    public func request(timeout: Double, label: String? = nil, _ completion: @escaping @Sendable (Result<String, RecorderError>) -> Void) {
        let seconds = max(0, min(timeout, 3600))
        let deadline = clock.now().advanced(byNanoseconds: Int64(seconds * 1e9))
        let id = state.withLock { state -> Int? in
            guard state.waiters.count < Self.maximumWaiters else { return nil }
            state.sequence += 1
            state.waiters.append(Waiter(id: state.sequence, deadline: deadline, label: label, completion: completion))
            return state.sequence
        }
        guard let id else {
            completion(.failure(RecorderError(.snapshotFailed, "\(Self.maximumWaiters) stills are already waiting for a frame from the camera; try again once they are taken")))
            return
        }
        queue.asyncAfter(deadline: .now() + seconds) { [weak self] in self?.expire(id) }
    }

    /// The next frame as JPEG bytes, not saved (Home Assistant and NVRs poll this).
    /// - Parameters:
    ///   - timeout: Seconds to wait for a frame.
    ///   - completion: Called once, on the stills queue (or at once when too many wait).
    public func requestJPEG(timeout: Double, _ completion: @escaping @Sendable (Result<[UInt8], RecorderError>) -> Void) {
        let seconds = max(0, min(timeout, 3600))
        let id = state.withLock { state -> Int? in
            guard state.viewers.count < Self.maximumWaiters else { return nil }
            state.sequence += 1
            state.viewers.append(Viewer(id: state.sequence, completion: completion))
            return state.sequence
        }
        guard let id else {
            completion(.failure(RecorderError(.snapshotFailed, "\(Self.maximumWaiters) pictures are already waiting for a frame from the camera; try again in a moment")))
            return
        }
        queue.asyncAfter(deadline: .now() + seconds) { [weak self] in self?.expire(id) }
    }

    /// A request nobody answered by its deadline fails with a clear message.
    private func expire(_ id: Int) {
        let (expired, viewer) = state.withLock { state -> (Waiter?, Viewer?) in
            if let index = state.waiters.firstIndex(where: { $0.id == id }) { return (state.waiters.remove(at: index), nil) }
            if let index = state.viewers.firstIndex(where: { $0.id == id }) { return (nil, state.viewers.remove(at: index)) }
            return (nil, nil)
        }
        let failure = RecorderError(.snapshotFailed, "no frame came from the camera in time; check the camera (kioskcam status, kioskcam probe)")
        expired?.completion(.failure(failure))
        viewer?.completion(.failure(failure))
    }

    /// Fails every waiting request (shutdown).
    public func failAll(_ reason: String) {
        let (all, viewers) = state.withLock { state -> ([Waiter], [Viewer]) in
            defer { state.waiters.removeAll(); state.viewers.removeAll() }
            return (state.waiters, state.viewers)
        }
        for waiter in all { waiter.completion(.failure(RecorderError(.snapshotFailed, reason))) }
        for viewer in viewers { viewer.completion(.failure(RecorderError(.snapshotFailed, reason))) }
    }

    /// Waits until stills in progress are saved (shutdown).
    public func drain() { queue.sync {} }

    public func take(_ frame: VideoFrame) {
        let (answered, viewers) = state.withLock { state -> ([Waiter], [Viewer]) in
            guard !state.waiters.isEmpty || !state.viewers.isEmpty else { return ([], []) }
            defer { state.waiters.removeAll(); state.viewers.removeAll() }
            return (state.waiters, state.viewers)
        }
        guard !answered.isEmpty || !viewers.isEmpty else { return }
        // The frame's buffer is held until the JPEG is made: no copy. One file per
        // label (a plain still and an event's still of the same frame are two files).
        queue.async { [self] in
            defer { frame.buffer.doneReading() }
            if !viewers.isEmpty {
                let jpeg = encodeJPEG(frame)
                for viewer in viewers { viewer.completion(jpeg) }
            }
            var saved: [String?: Result<String, RecorderError>] = [:]
            for waiter in answered {
                let result = saved[waiter.label] ?? save(frame, label: waiter.label)
                saved[waiter.label] = result
                waiter.completion(result)
            }
        }
    }

    /// The frame as JPEG, turned upright, without EXIF (a picture for a page, not a record).
    private func encodeJPEG(_ frame: VideoFrame) -> Result<[UInt8], RecorderError> {
        do {
            return .success(try jpegBytes(frame))
        } catch let error as MediaError {
            return .failure(RecorderError(.snapshotFailed, error.description))
        } catch {
            return .failure(RecorderError(.snapshotFailed, "\(error)"))
        }
    }

    private func jpegBytes(_ frame: VideoFrame) throws -> [UInt8] {
        let quality = quality, orientation = orientation
        let capturedAt = WallClock.unixSeconds(of: frame.timestamp, clock: clock)
        let overlay = overlay
        return try encoder.withLock { cached -> [UInt8] in
            let encoder: JPEGEncoder
            if let existing = cached.jpeg, existing.input == frame.format {
                encoder = existing
            } else {
                encoder = try JPEGEncoder(input: frame.format, quality: quality, orientation: orientation)
                cached.jpeg = encoder
            }
            guard let overlay else { return try encoder.encode(frame.buffer.bytes) }
            let stamp = cached.overlay ?? overlay.makeStamp()
            cached.overlay = stamp
            return try encoder.encode(frame.buffer.bytes) { stamp.draw(into: $0, unixSeconds: capturedAt, frame: frame.sequence) }
        }
    }

    private func save(_ frame: VideoFrame, label: String?) -> Result<String, RecorderError> {
        do {
            let jpeg = try jpegBytes(frame)
            // The name and EXIF say when the frame was captured (as the overlay does), not
            // when the JPEG was written: a slow board can take seconds between the two.
            let now = Date(timeIntervalSince1970: WallClock.unixSeconds(of: frame.timestamp, clock: clock))
            let taken = LocalTimestamp(now)
            let exif = StillExif(taken: taken, utcOffsetMinutes: LocalZone.offset(at: now).seconds / 60,
                                 deviceID: deviceID, software: software)
            let bytes = exif.inserted(into: jpeg) ?? jpeg
            let path = try files.writeFile(bytes, kind: .photo, time: taken, label: label)
            logger.info("snapshot \(path)")
            onSaved(path)
            return .success(path)
        } catch let error as MediaError {
            return .failure(RecorderError(.snapshotFailed, error.description))
        } catch let error as RecorderError {
            return .failure(error)
        } catch {
            return .failure(RecorderError(.snapshotFailed, "\(error)"))
        }
    }
}
