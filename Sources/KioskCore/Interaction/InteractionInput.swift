/// Something the UI loop saw, handed to `InteractionController.handle(_:now:)` with the
/// monotonic time it is handled at.
///
/// Inputs are plain values: decoded device events, answers that came back from other
/// threads, and what became of the devices the loop owns. The loop reads nothing else
/// into the controller, so a test can replay any sequence by hand.
public enum InteractionInput: Sendable, Equatable {
    /// The loop began: draw the first picture.
    case started
    /// Time passed: run the timers. The device wrappers' own timers (debounce, long
    /// press, a touch's missing release) have run first and their events came before.
    case tick

    // MARK: People

    /// A recognised press of a GPIO button.
    /// - recorder: What the owner of the recordings says is recording now.
    case button(ButtonEvent, recorder: RecordingActivity)
    /// A touch, in logical screen pixels.
    /// - recorder: What the owner of the recordings says is recording now.
    case touch(TouchEvent, recorder: RecordingActivity)

    // MARK: Answers and news from other threads

    /// The recorder's state changed (the appliance's `.recordingState` event).
    case recordingStateChanged(RecordingState)
    /// New values for the live screen's status line, level meter and REC indicator.
    case status(ScreenStatus)
    /// The answer to `.checkPIN`.
    case pinChecked(PinCheckResult)
    /// Something failed (a recording, a device): the LED shows it for a while.
    case recorderFailed
    /// Show the PIN screen now (the control socket's `lock`).
    case lockNow
    /// An answer for the media view: a listing, where the player is, a failure.
    case media(MediaAnswer)
    /// The zoom was set elsewhere (the control socket's `camera.set zoom=`): the next
    /// pinch starts from `factor`, not from what the last pinch left.
    case zoomChanged(Double)
    /// A command sent with `.sendRecorderCommand` finished or failed.
    /// - state: The recorder's state now; a refused start never changes it.
    case recorderCommandDone(state: RecordingState)

    // MARK: Devices

    /// The GPIO chip and its lines were opened; `summary` names the lines.
    case buttonsOpened(summary: String)
    /// GPIO is off (`chip = "none"`, or `"auto"` found no chip): nothing to retry.
    case buttonsNotConfigured
    /// Opening, reading or writing the GPIO lines failed; the loop has let them go.
    case buttonsFailed(String)
    /// Whether the touch panel must be rescanned every few seconds (inotify cannot watch
    /// `/dev/input` yet). Told after the panel starts and after every `.rescanTouch`.
    case touchNeedsRescan(Bool)
}

/// What the media view's owner reports back (each answers a `MediaViewEffect`).
public enum MediaAnswer: Sendable, Equatable {
    /// The day folders found (answers `.listDays`).
    case days([String])
    /// One day's recordings (answers `.listDay`).
    case day(String, [MediaItem])
    /// More thumbnails of this day are stored.
    case thumbnails(String)
    /// Where the player is (sent a few times a second while it plays).
    case playback(position: Double, duration: Double?, paused: Bool)
    /// Playing or showing failed: the reason, for the screen.
    case failed(String)

    /// Applies the answer to the browser.
    public func apply(to browser: inout MediaBrowser) -> [MediaViewEffect] {
        switch self {
        case .days(let names): browser.showDays(names)
        case .day(let day, let items): browser.showDay(day, items: items)
        case .thumbnails(let day): browser.thumbnailsReady(for: day)
        case .playback(let position, let duration, let paused): browser.playback(position: position, duration: duration, paused: paused)
        case .failed(let reason): browser.playbackFailed(reason)
        }
    }
}
