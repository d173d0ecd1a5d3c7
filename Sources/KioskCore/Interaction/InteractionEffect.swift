/// What `InteractionController` asks the UI loop to do, in the order given: a `.draw`
/// comes first, so the screen answers a touch in the same wake-up, before anything slow
/// is handed off.
///
/// The recorder command, the still and the PIN check are slow: the loop runs them off
/// its thread and feeds their answers back as inputs (`.recorderCommandDone`,
/// `.pinChecked`, `.recorderFailed`).
public enum InteractionEffect: Sendable, Equatable, CustomStringConvertible {
    /// How loud a `.log` line is.
    public enum LogLevel: String, Sendable, Equatable {
        case info, notice, error
    }

    // MARK: Recorder and PIN store

    /// Hand the request to the owner of the recordings; answer with `.recorderCommandDone`.
    case sendRecorderCommand(RecordingRequest)
    /// Take a still from the next frame; a failure comes back as `.recorderFailed`.
    case takeSnapshot
    /// Start the screen broadcast to `[broadcast] to`, or stop the one running.
    case toggleBroadcast
    /// Zoom the camera to this factor (a pinch or a double tap on the preview): the
    /// camera's own zoom where it has one, else the digital zoom; both glide there.
    case setZoom(Double)
    /// Focus (and meter, where the camera can) on this point of the live preview, in
    /// logical screen pixels: a single tap on the picture, off the buttons.
    case focus(ScreenPoint)
    /// Switch the camera's torch on (true) or off (false) (the screen's torch button).
    case setTorch(Bool)
    /// Check these four digits against the PIN store; answer with `.pinChecked`.
    case checkPIN(String)

    // MARK: Screen

    /// Draw this model now.
    case draw(ScreenModel)
    /// Take the preview branch's newest frame, if there is one, and draw this model with it.
    case refreshPreview(ScreenModel)
    /// Switch the panel's backlight off (true) or on (false).
    case setPanelBlank(Bool)
    /// The media view asks for a listing, a recording played, a seek, a stop; answers
    /// come back as `.media` inputs.
    case media(MediaViewEffect)

    // MARK: Status LED

    /// Show this pattern on the status LED (from its beginning; the LED's own timer blinks it).
    case setLED(StatusLEDPattern)

    // MARK: Devices

    /// Try the GPIO chip and its lines again; answer with a `.buttons…` input.
    case openButtons
    /// Look for touch devices again; answer with `.touchNeedsRescan`.
    case rescanTouch

    // MARK: For people: the log and the event stream

    case log(LogLevel, String)
    /// A different page is showing: log "screen: <page>" and publish it.
    case pageShown(ScreenPage)
    /// A wrong PIN was entered on the screen: log it and publish it.
    case pinRejected
    /// This touch release has just been drawn: log how long after the kernel's timestamp
    /// (the ≤ 16 ms promise for a key, measured where it matters).
    case measureTouchLatency(TouchEvent)

    /// Never shows the digits, so effects can be logged.
    public var description: String {
        switch self {
        case .sendRecorderCommand(let request): "sendRecorderCommand(\(request))"
        case .takeSnapshot: "takeSnapshot"
        case .toggleBroadcast: "toggleBroadcast"
        case .setZoom(let factor): "setZoom(\(factor))"
        case .focus(let point): "focus(\(point))"
        case .setTorch(let on): "setTorch(\(on))"
        case .checkPIN: "checkPIN(****)"
        case .draw(let model): "draw(\(model.page.rawValue))"
        case .refreshPreview: "refreshPreview"
        case .setPanelBlank(let blank): "setPanelBlank(\(blank))"
        case .media(let effect): "media(\(effect))"
        case .setLED(let pattern): "setLED(\(pattern))"
        case .openButtons: "openButtons"
        case .rescanTouch: "rescanTouch"
        case .log(let level, let message): "log(\(level.rawValue), \(message))"
        case .pageShown(let page): "pageShown(\(page.rawValue))"
        case .pinRejected: "pinRejected"
        case .measureTouchLatency(let event): "measureTouchLatency(\(event))"
        }
    }
}
