import Foundation
import KioskCore
import KioskRecording
import KioskSources
import KioskV4L2
import Logging

/// How one camera setting came out.
public struct CameraSettingReport: Sendable, Equatable {
    public var name: CameraSettingName
    /// What is set now ("2.0 (digital)", "auto", "150 (range 100…500)"), or nil when it failed.
    public var applied: String?
    /// Why not, or what was changed on the way (clamped).
    public var message: String?

    public var line: String {
        "\(name.rawValue): " + (applied ?? "not set") + (message.map { " — \($0)" } ?? "")
    }
}

/// Camera settings changed while the daemon runs: on the camera's own controls where it
/// has them (zoom glides), else — for zoom — the digital zoom in front of the graph. A
/// libcamera camera takes them as libcamera controls (`LibcameraControlPlan`'s units);
/// its zoom stays digital.
/// What was asked is remembered and given to the camera again when it comes back after
/// an unplug, so run-time changes survive a reconnect.
final class CameraAdjuster: Sendable {
    private let camera: VideoSource?
    let digitalZoom: DigitalZoomStage?
    private let logger: Logger
    private let remembered = Locked(CameraAdjustment())
    /// What the config gave the camera at open (`camera.focus` …), for `camera.get` on a
    /// libcamera camera, which reads no value back.
    private let configured: CameraAdjustment

    init(camera: VideoSource?, digitalZoom: DigitalZoomStage?, configured: Configuration.Camera = Configuration().camera,
         logger: Logger) {
        self.camera = camera
        self.digitalZoom = digitalZoom
        self.logger = logger
        self.configured = Self.adjustment(from: configured)
    }

    /// The config's camera controls as settings (zoom left out: the config's is in the
    /// camera's units, and a libcamera camera's is shown by the digital zoom).
    static func adjustment(from camera: Configuration.Camera) -> CameraAdjustment {
        var adjustment = CameraAdjustment()
        func value(_ setting: Configuration.ControlSetting?) -> CameraSettingValue? {
            switch setting {
            case .automatic?: .automatic
            case .value(let number)?: .value(Double(number))
            case nil: nil
            }
        }
        let settings: [(CameraSettingName, CameraSettingValue?)] = [
            (.focus, value(camera.focus)), (.exposure, value(camera.exposure)), (.whiteBalance, value(camera.whiteBalance)),
            (.brightness, camera.brightness.map { .value(Double($0)) }), (.contrast, camera.contrast.map { .value(Double($0)) }),
        ]
        for case let (name, value?) in settings { try? adjustment.set(name, value) }
        return adjustment
    }

    /// The libcamera camera open now (in the daemon or in its camera helper), if the camera is one.
    private var libcamera: LibcameraControlling? {
        ((camera as? CameraSupervisor)?.current ?? camera) as? LibcameraControlling
    }

    /// The camera's V4L2 controls, if it is a V4L2 camera that is open now.
    private var controls: CameraControls? {
        let source = (camera as? CameraSupervisor)?.current ?? camera
        return (source as? V4L2Camera)?.controls
    }

    /// Applies each setting and remembers it.
    func apply(_ adjustment: CameraAdjustment) -> [CameraSettingReport] {
        remembered.withLock { $0 = $0.merging(adjustment) }
        let libcamera = libcamera
        let reports = adjustment.settings.map { setting in
            if let libcamera, setting.name != .zoom { return Self.apply(setting.name, setting.value, to: libcamera) }
            return apply(setting.name, setting.value, to: controls)
        }
        for report in reports { logger.notice("camera setting \(report.line)") }
        return reports
    }

    /// Tap-to-focus on `point` of the frame: libcamera's AfWindows (+ AfTrigger), V4L2's
    /// one-shot autofocus (no region: V4L2 has no control for one), else nothing. A camera
    /// that cannot is said once in the log, not at every tap.
    /// - Returns: What was asked, for the debug log; nil when nothing could be.
    @discardableResult
    func focus(at point: PicturePoint) -> String? {
        if let libcamera {
            let asked = remembered.withLock { $0.settings } + configured.settings
            let continuous = asked.first { $0.name == .focus }?.value == .automatic
            let (plan, problem) = libcamera.focus(at: point, continuous: continuous)
            if let problem {
                logger.warning("tap to focus: \(problem)")
                return nil
            }
            guard let window = plan.window else {
                cannotFocus("the camera has no \(plan.missing.joined(separator: ", "))")
                return nil
            }
            return "AfWindows \(window)" + (continuous ? " (continuous AF)" : ", AfTrigger start") + "; " + LibcameraFocusPlan.exposureNote
        }
        guard let controls, controls.hasAutofocusStart else {
            cannotFocus(camera == nil ? "no camera" : "the camera has no autofocus control")
            return nil
        }
        do {
            try controls.startAutofocus()
            return "one-shot autofocus started (V4L2 has no focus region: the camera chooses where)"
        } catch {
            logger.warning("tap to focus: \(error)")
            return nil
        }
    }

    private let toldCannotFocus = Locked(false)

    private func cannotFocus(_ why: String) {
        guard !toldCannotFocus.withLock({ told in defer { told = true }; return told }) else { return }
        logger.notice("tap to focus: \(why); taps on the preview do nothing on this camera")
    }

    /// Gives a camera that was opened again what was asked before (called by the
    /// camera's reopen, on the supervisor's thread).
    func reapply(to camera: V4L2Camera) -> [String] {
        let settings = remembered.withLock { $0 }
        return settings.settings.map { apply($0.name, $0.value, to: camera.controls).line }
    }

    /// One setting on a libcamera camera's controls, for its next frames.
    static func apply(_ name: CameraSettingName, _ value: CameraSettingValue, to camera: LibcameraControlling) -> CameraSettingReport {
        let setting: Configuration.ControlSetting
        switch value {
        case .automatic: setting = .automatic
        case .value(let number):
            guard number.isFinite else { return CameraSettingReport(name: name, applied: nil, message: "not a number") }
            setting = .value(Int(min(max(number, -1_000_000), 1_000_000).rounded()))
        }
        let number: Int? = if case .value(let v) = setting { v } else { nil }
        let outcomes: [LibcameraControlPlan.Outcome]
        switch name {
        case .focus: outcomes = camera.apply(focus: setting)
        case .exposure: outcomes = camera.apply(exposure: setting)
        case .whiteBalance: outcomes = camera.apply(whiteBalance: setting)
        // "auto" is the camera's default: 0 and 100 (%).
        case .brightness: outcomes = camera.apply(brightness: number ?? 0)
        case .contrast: outcomes = camera.apply(contrast: number ?? 100)
        case .zoom, .torch: outcomes = []
        }
        guard let first = outcomes.first else {
            return CameraSettingReport(name: name, applied: nil, message: "this camera has no \(name.rawValue) control")
        }
        let problem = outcomes.compactMap(\.problem).first
        return CameraSettingReport(name: name, applied: problem == nil ? first.applied : nil, message: problem)
    }

    private func apply(_ name: CameraSettingName, _ value: CameraSettingValue, to controls: CameraControls?) -> CameraSettingReport {
        if name == .zoom {
            let factor: Double
            if case .value(let number) = value { factor = number } else { factor = 1 }
            if let controls, let control = try? controls.describe(.zoom), control.isWritable {
                digitalZoom?.setZoom(1)
                let device = ZoomMapping.deviceValue(factor: factor, minimum: control.range.minimum, maximum: control.range.maximum)
                do {
                    let set = try controls.set(.zoom, to: device)
                    let reached = ZoomMapping.factor(deviceValue: set, minimum: control.range.minimum, maximum: control.range.maximum)
                    return CameraSettingReport(name: name, applied: String(format: "%.2f", reached) + " (the camera's zoom, \(set))",
                                               message: abs(reached - factor) > 0.01 ? "clamped to the camera's range" : nil)
                } catch {
                    return CameraSettingReport(name: name, applied: nil, message: error.description)
                }
            }
            guard let digitalZoom else {
                return CameraSettingReport(name: name, applied: nil, message: "this camera has no zoom control, and no digital zoom is set up")
            }
            let set = digitalZoom.setZoom(factor)
            return CameraSettingReport(name: name, applied: String(format: "%.2f", set) + " (digital)",
                                       message: set < factor ? "digital zoom stops at \(Int(digitalZoom.maximum))×" : nil)
        }
        guard let controls, let controlName = CameraControlName(rawValue: name.rawValue) else {
            return CameraSettingReport(name: name, applied: nil, message: "this camera has no \(name.rawValue) control")
        }
        do {
            switch value {
            case .automatic:
                try controls.setAutomatic(controlName)
                return CameraSettingReport(name: name, applied: "auto", message: nil)
            case .value(let number):
                let asked = Int(number.rounded())
                let set = try controls.set(controlName, to: asked)
                if name == .torch { return CameraSettingReport(name: name, applied: asked == 0 ? "off" : "on", message: nil) }
                let range = (try? controls.describe(controlName))?.range
                return CameraSettingReport(name: name, applied: String(set) + (range.map { " (range \($0.minimum)…\($0.maximum))" } ?? ""),
                                           message: set != asked ? "clamped to the camera's range" : nil)
            }
        } catch {
            return CameraSettingReport(name: name, applied: nil, message: error.code == .unsupportedControl ? error.detail : error.description)
        }
    }

    /// Every setting: its value now and how it is applied, for `camera.get`.
    func current() -> [String: JSONValue] {
        var result: [String: JSONValue] = [:]
        let controls = controls
        let libcameraControls = libcamera?.controlLimits
        let asked = configured.merging(remembered.withLock { $0 })
        for name in CameraSettingName.allCases {
            if let libcameraControls, name != .zoom {
                let described = LibcameraControlPlan.describe(name, asked: asked.value(name), controls: libcameraControls)
                result[name.rawValue] = .object(described ?? ["how": .string("none")])
                continue
            }
            if name == .zoom, let controls, let control = try? controls.describe(.zoom), control.isWritable {
                let factor = ZoomMapping.factor(deviceValue: control.value ?? control.defaultValue, minimum: control.range.minimum, maximum: control.range.maximum)
                result["zoom"] = .object(["value": .number(factor), "how": .string("camera"),
                                          "maximum": .number(ZoomMapping.maximumFactor(minimum: control.range.minimum, maximum: control.range.maximum))])
                continue
            }
            if name == .zoom, let digitalZoom {
                let zoom = digitalZoom.zoom
                result["zoom"] = .object(["value": .number(zoom.now), "target": .number(zoom.target), "how": .string("digital"),
                                          "maximum": .number(digitalZoom.maximum)])
                continue
            }
            guard let controls, let controlName = CameraControlName(rawValue: name.rawValue),
                  let control = try? controls.describe(controlName) else {
                result[name.rawValue] = .object(["how": .string("none")])
                continue
            }
            result[name.rawValue] = .object(["value": .integer(Int64(control.value ?? control.defaultValue)), "minimum": .integer(Int64(control.range.minimum)),
                                             "maximum": .integer(Int64(control.range.maximum)), "how": .string("camera")])
        }
        return result
    }
}
