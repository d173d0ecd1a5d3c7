import CV4L2
import Foundation
import Glibc
import KioskCore

/// The camera controls kioskcam knows, each mapped to its V4L2 control (and the automatic
/// mode that must be off for a manual value to take effect).
public enum CameraControlName: String, CaseIterable, Sendable, Codable, CustomStringConvertible {
    case zoom
    case focus
    case exposure
    case whiteBalance = "white_balance"
    case brightness
    case contrast
    /// A light on the camera (V4L2's flash LED in torch mode): 0 off, anything else on.
    case torch

    /// The control that holds the value.
    public var controlID: UInt32 {
        switch self {
        case .zoom: kc_v4l2_cid_zoom_absolute()
        case .focus: kc_v4l2_cid_focus_absolute()
        case .exposure: kc_v4l2_cid_exposure_absolute()
        case .whiteBalance: kc_v4l2_cid_white_balance_temperature()
        case .brightness: kc_v4l2_cid_brightness()
        case .contrast: kc_v4l2_cid_contrast()
        case .torch: kc_v4l2_cid_flash_led_mode()
        }
    }

    /// The automatic mode switched off before a manual value is set, on by `setAutomatic`.
    public var automaticControlID: UInt32? {
        switch self {
        case .focus: kc_v4l2_cid_focus_auto()
        case .exposure: kc_v4l2_cid_exposure_auto()
        case .whiteBalance: kc_v4l2_cid_auto_white_balance()
        default: nil
        }
    }

    /// "zoom", "white balance".
    public var description: String { self == .whiteBalance ? "white balance" : rawValue }
}

/// Sets the camera's zoom, focus, exposure, white balance, brightness, contrast and torch
/// where the device has them. Values are clamped to the device's range and snapped to
/// its step; zoom glides to a new value over `rampDuration` (`ControlRamp`) on a
/// thread of its own. A control the camera lacks is a clear error ("this camera has no
/// zoom control"), never a crash — and `apply` turns every problem into a message, so
/// a control never stops a recording.
public final class CameraControls: Sendable {
    public let device: V4L2Device
    /// Seconds a smooth change (zoom) takes.
    public let rampDuration: Double
    /// Values applied per second during a smooth change.
    public let rampStepsPerSecond: Double

    /// One ramp at a time, on its own thread. A new target for the control being ramped
    /// continues from wherever it is; a ramp of another control first finishes the
    /// current one at its target; a direct `set` of the ramped control cancels the ramp.
    private struct RampRequest {
        var controlID: UInt32
        var target: Int
        var range: ControlRange
    }
    private struct RampState {
        var pending: RampRequest?
        var activeID: UInt32?
        var cancelled = false
        var running = false
        /// Bumped by every new target and every cancel; the running ramp looks at the news.
        var generation = 0
        var failure: V4L2Error?
    }
    private let rampState = Locked(RampState())
    private let ramping = ThreadGroup()

    /// - Parameters:
    ///   - rampDuration: Seconds a smooth change (zoom) takes.
    ///   - rampStepsPerSecond: Values applied per second during it.
    public init(device: V4L2Device, rampDuration: Double = 0.5, rampStepsPerSecond: Double = 30) {
        self.device = device
        self.rampDuration = rampDuration
        self.rampStepsPerSecond = rampStepsPerSecond
    }

    /// Which of the named controls this camera has.
    public func available() -> [CameraControlName] {
        CameraControlName.allCases.filter { name in
            (try? device.control(id: name.controlID)) != nil
                || (name.automaticControlID.flatMap { try? device.control(id: $0) }) != nil
        }
    }

    /// The device's description of `name` (range, current value), nil when it has none.
    /// - Throws: `V4L2Error` when the device cannot be asked (e.g. unplugged).
    public func describe(_ name: CameraControlName) throws(V4L2Error) -> V4L2Control? {
        try device.control(id: name.controlID)
    }

    /// Sets `name` to `value`, clamped to the device's range and snapped to its step,
    /// after switching the control's automatic mode off. Zoom ramps (returns at once,
    /// the ramp runs on; `waitForRamp()` waits) unless `smoothly` is false.
    /// - Returns: The value set (or being ramped to).
    /// - Throws: `V4L2Error.unsupportedControl` ("this camera has no zoom control", or a
    ///   read-only one, or a manual mode the camera lacks), or what VIDIOC_S_CTRL reports.
    @discardableResult
    public func set(_ name: CameraControlName, to value: Int, smoothly: Bool? = nil) throws(V4L2Error) -> Int {
        let control = try writableControl(name)
        if name.automaticControlID != nil { try setManualMode(name) }
        var target = control.range.clamp(value)
        if name == .torch {
            target = value == 0 ? Int(kc_v4l2_flash_led_mode_none()) : Int(kc_v4l2_flash_led_mode_torch())
            guard control.range.contains(target) else {
                throw unsupported(name, "this camera's flash LED has no torch mode")
            }
        }
        if smoothly ?? (name == .zoom) {
            startRamp(RampRequest(controlID: name.controlID, target: target, range: control.range))
            return target
        }
        try cancelRamp(of: name.controlID) { () throws(V4L2Error) in
            try device.setValue(target, ofControl: name.controlID)
        }
        return target
    }

    /// Switches `name` to the camera's automatic mode (auto focus, auto exposure, auto
    /// white balance); controls without one go back to the device's default value.
    /// - Throws: `V4L2Error.unsupportedControl` when the camera has neither.
    public func setAutomatic(_ name: CameraControlName) throws(V4L2Error) {
        guard let automaticID = name.automaticControlID else {
            let control = try writableControl(name)
            try cancelRamp(of: name.controlID) { () throws(V4L2Error) in
                try device.setValue(control.defaultValue, ofControl: name.controlID)
            }
            return
        }
        guard let automatic = try device.control(id: automaticID), automatic.isWritable else {
            throw unsupported(name, "this camera has no automatic \(name)")
        }
        let value: Int
        if name == .exposure {
            // Full auto where offered, else aperture priority (UVC webcams: auto exposure, fixed iris).
            let offered = Set(automatic.menu.map(\.index))
            let full = Int(kc_v4l2_exposure_auto()), aperture = Int(kc_v4l2_exposure_aperture_priority())
            guard let mode = [full, aperture].first(where: { offered.contains($0) }) else {
                throw unsupported(name, "this camera has no automatic exposure mode")
            }
            value = mode
        } else {
            value = 1
        }
        try device.setValue(value, ofControl: automaticID)
    }

    /// The current value of `name`.
    /// - Throws: `V4L2Error.unsupportedControl` when the camera has no such control.
    /// Whether the camera has a one-shot autofocus (V4L2_CID_AUTO_FOCUS_START) — the only
    /// tap-to-focus V4L2 offers: it has no control for a region to focus or meter on.
    public var hasAutofocusStart: Bool {
        (try? device.control(id: kc_v4l2_cid_auto_focus_start())) != nil
    }

    /// Starts one autofocus run (a button control: the value is ignored by drivers).
    /// - Throws: `V4L2Error.unsupportedControl` when the camera has none, or what
    ///   VIDIOC_S_CTRL reports (EBUSY while continuous autofocus is on, on some drivers).
    public func startAutofocus() throws(V4L2Error) {
        guard hasAutofocusStart else {
            throw V4L2Error(.unsupportedControl, path: device.path, operation: "start autofocus",
                            detail: "this camera has no one-shot autofocus (V4L2_CID_AUTO_FOCUS_START)",
                            hint: "see its controls with `v4l2-ctl -d \(device.path) --list-ctrls`")
        }
        try device.setValue(1, ofControl: kc_v4l2_cid_auto_focus_start())
    }

    public func value(_ name: CameraControlName) throws(V4L2Error) -> Int {
        guard try device.control(id: name.controlID) != nil else { throw unsupported(name, nil) }
        return try device.value(ofControl: name.controlID)
    }

    /// Applies the configured settings, each only if the camera has it.
    /// Never throws: a missing control or a refused value becomes one line of the result,
    /// for the log — a camera without zoom still records.
    /// - Returns: One line per setting given, e.g. "zoom 150 → 150 (range 100…500)" or
    ///   "zoom: this camera has no zoom control".
    @discardableResult
    public func apply(zoom: Int? = nil, focus: Configuration.ControlSetting? = nil,
                      exposure: Configuration.ControlSetting? = nil, whiteBalance: Configuration.ControlSetting? = nil,
                      brightness: Int? = nil, contrast: Int? = nil) -> [String] {
        let settings: [(CameraControlName, Configuration.ControlSetting?)] = [
            (.zoom, zoom.map { .value($0) }), (.focus, focus), (.exposure, exposure),
            (.whiteBalance, whiteBalance), (.brightness, brightness.map { .value($0) }),
            (.contrast, contrast.map { .value($0) }),
        ]
        var lines: [String] = []
        for (name, setting) in settings {
            guard let setting else { continue }
            do {
                switch setting {
                case .automatic:
                    try setAutomatic(name)
                    lines.append("\(name): automatic")
                case .value(let value):
                    let set = try self.set(name, to: value)
                    let range = (try? describe(name))?.range
                    let rangeText = range.map { " (range \($0.minimum)…\($0.maximum))" } ?? ""
                    lines.append(set == value ? "\(name) \(value)" : "\(name) \(value) → \(set)\(rangeText)")
                }
            } catch {
                lines.append("\(name): \(error.code == .unsupportedControl ? error.detail : error.description)")
            }
        }
        return lines
    }

    /// Waits until every ramp has finished.
    /// - Throws: The `V4L2Error` that stopped the ramp early, if any (reported once).
    public func waitForRamp() throws(V4L2Error) {
        ramping.wait()
        if let failure = rampState.withLock({ state -> V4L2Error? in defer { state.failure = nil }; return state.failure }) {
            throw failure
        }
    }

    // MARK: Internals

    private func writableControl(_ name: CameraControlName) throws(V4L2Error) -> V4L2Control {
        guard let control = try device.control(id: name.controlID) else {
            let what = name == .torch ? "torch (flash LED)" : "\(name)"
            throw unsupported(name, "this camera has no \(what) control")
        }
        guard control.isWritable else { throw unsupported(name, "this camera's \(name) control is read-only") }
        return control
    }

    private func setManualMode(_ name: CameraControlName) throws(V4L2Error) {
        guard let automaticID = name.automaticControlID, let automatic = try device.control(id: automaticID),
              automatic.isWritable else { return }
        if name == .exposure {
            let manual = Int(kc_v4l2_exposure_manual())
            guard automatic.menu.isEmpty || automatic.menu.contains(where: { $0.index == manual }) else {
                throw unsupported(name, "this camera has no manual exposure mode")
            }
            if automatic.value != manual { try device.setValue(manual, ofControl: automaticID) }
        } else if automatic.value != 0 {
            try device.setValue(0, ofControl: automaticID)
        }
    }

    private func unsupported(_ name: CameraControlName, _ detail: String?) -> V4L2Error {
        V4L2Error(.unsupportedControl, path: device.path, operation: "set \(name)",
                  detail: detail ?? "this camera has no \(name) control",
                  hint: "see its controls with `kioskcam probe` or `v4l2-ctl -d \(device.path) --list-ctrls`")
    }

    private func startRamp(_ request: RampRequest) {
        rampState.withLock { state in
            state.pending = request
            state.generation += 1
            guard !state.running else { return }
            state.running = true
            // Started under the lock, so `waitForRamp` never sees it running but not yet counted.
            ramping.start(name: "kioskcam.camera.ramp") { [self] in runRamps() }
        }
    }

    /// Runs `body` (a direct setting) with any ramp of `controlID` stopped first, so no
    /// later ramp step overwrites it.
    private func cancelRamp(of controlID: UInt32, _ body: () throws(V4L2Error) -> Void) throws(V4L2Error) {
        try rampState.withLock { (state: inout RampState) throws(V4L2Error) in
            if state.pending?.controlID == controlID { state.pending = nil }
            if state.activeID == controlID {
                state.cancelled = true
                state.generation += 1
            }
            try body()
        }
    }

    private func runRamps() {
        let clock = CaptureClock()
        while true {
            let taken: (request: RampRequest?, generation: Int) = rampState.withLock { state in
                defer { state.pending = nil }
                state.cancelled = false
                state.activeID = state.pending?.controlID
                if state.pending == nil { state.running = false }
                return (state.pending, state.generation)
            }
            guard let request = taken.request else { return }
            let current = (try? device.value(ofControl: request.controlID)) ?? request.target
            let ramp = ControlRamp(from: current, to: request.target, range: request.range,
                                   duration: rampDuration, stepsPerSecond: rampStepsPerSecond)
            let start = clock.now()
            for step in ramp.steps {
                let due = start.advanced(byNanoseconds: Int64(step.offset * 1e9))
                let wait = due.nanoseconds(since: clock.now())
                if wait > 0 { usleep(UInt32(clamping: wait / 1_000)) }
                // Each step is applied under the lock, after a look at the news.
                let goOn: Bool = rampState.withLock { state in
                    var value = step.value
                    var last = false
                    if state.generation != taken.generation {
                        // Cancelled: stop here. Retargeted: the next round starts from here.
                        if state.cancelled || state.pending?.controlID == request.controlID { return false }
                        // Another control's turn: finish this one at its target first.
                        value = request.target
                        last = true
                    }
                    do throws(V4L2Error) {
                        try device.setValue(value, ofControl: request.controlID)
                    } catch {
                        state.failure = error
                        return false
                    }
                    return !last
                }
                if !goOn { break }
            }
        }
    }
}
