import Foundation
import KioskCore
import KioskSources

/// Our camera settings for a libcamera camera, as one value (sent to a camera helper).
public struct LibcameraSettingsRequest: Codable, Sendable, Equatable {
    public var zoom: Int?
    public var focus: Configuration.ControlSetting?
    public var exposure: Configuration.ControlSetting?
    public var whiteBalance: Configuration.ControlSetting?
    public var brightness: Int?
    public var contrast: Int?

    public init(zoom: Int? = nil, focus: Configuration.ControlSetting? = nil, exposure: Configuration.ControlSetting? = nil,
                whiteBalance: Configuration.ControlSetting? = nil, brightness: Int? = nil, contrast: Int? = nil) {
        self.zoom = zoom
        self.focus = focus
        self.exposure = exposure
        self.whiteBalance = whiteBalance
        self.brightness = brightness
        self.contrast = contrast
    }
}

/// A libcamera camera's controls, in this process (`LibcameraCamera`) or in a camera
/// helper (`LibcameraHelperCamera`): what the daemon's camera settings and tap-to-focus use.
public protocol LibcameraControlling: AnyObject, Sendable {
    var name: String { get }
    /// The camera's controls and their limits, by libcamera name (for `camera get`).
    var controlLimits: [String: LibcameraControlLimits] { get }
    /// Applies our settings as libcamera controls, for the next frames.
    func apply(_ request: LibcameraSettingsRequest) -> [LibcameraControlPlan.Outcome]
    /// Tap-to-focus on `point` (AfWindows, and AfTrigger unless `continuous`).
    func focus(at point: PicturePoint, continuous: Bool) -> (plan: LibcameraFocusPlan, problem: String?)
}

extension LibcameraControlling {
    public func apply(zoom: Int? = nil, focus: Configuration.ControlSetting? = nil,
                      exposure: Configuration.ControlSetting? = nil, whiteBalance: Configuration.ControlSetting? = nil,
                      brightness: Int? = nil, contrast: Int? = nil) -> [LibcameraControlPlan.Outcome] {
        apply(LibcameraSettingsRequest(zoom: zoom, focus: focus, exposure: exposure, whiteBalance: whiteBalance,
                                       brightness: brightness, contrast: contrast))
    }
}

/// What a libcamera helper tells the daemon beyond the format (`CameraHelperOpened.details`).
public struct LibcameraHelperDetails: Codable, Sendable, Equatable {
    public var id: String
    public var model: String
    public var negotiation: String
    public var controlLimits: [String: LibcameraControlLimits]
}

/// The calls a libcamera helper answers, and its answers.
enum LibcameraHelperCall: Codable {
    case apply(LibcameraSettingsRequest)
    case focus(PicturePoint, continuous: Bool)
}

enum LibcameraHelperAnswer: Codable {
    case applied([LibcameraControlPlan.Outcome])
    case focused(LibcameraFocusPlan, problem: String?)
}

extension LibcameraCamera {
    /// Its details for the daemon, in a camera helper.
    public var helperDetails: Data {
        (try? JSONEncoder().encode(LibcameraHelperDetails(id: id, model: model, negotiation: negotiation,
                                                          controlLimits: controlLimits))) ?? Data()
    }

    /// Answers one of the daemon's calls, in a camera helper.
    public func answerHelperCall(_ payload: Data) -> Data {
        let answer: LibcameraHelperAnswer
        switch try? JSONDecoder().decode(LibcameraHelperCall.self, from: payload) {
        case .apply(let request)?: answer = .applied(apply(request))
        case .focus(let point, let continuous)?:
            let (plan, problem) = focus(at: point, continuous: continuous)
            answer = .focused(plan, problem: problem)
        case nil: answer = .applied([LibcameraControlPlan.Outcome(setting: "controls", problem: "the daemon's call was not understood")])
        }
        return (try? JSONEncoder().encode(answer)) ?? Data()
    }
}

/// A libcamera camera opened in a camera helper process (`kioskcam camera-helper
/// --source libcamera`), so that libcamera aborting — as 0.0.3 does when a camera module
/// comes back ("duplicated ID") — ends only the helper, and the supervisor opens a fresh
/// one. Its controls are set through the helper.
public final class LibcameraHelperCamera: VideoSource, FrameCounting, LibcameraControlling, Sendable {
    public let camera: HelperCamera
    public let details: LibcameraHelperDetails
    public var name: String { camera.name }
    public var format: VideoFormat { camera.format }
    public var frameCounters: CameraFrameCounters { camera.frameCounters }
    public var controlLimits: [String: LibcameraControlLimits] { details.controlLimits }
    public var id: String { details.id }
    public var model: String { details.model }
    public var negotiation: String { details.negotiation }

    /// The helper's arguments for camera `id` (nil: libcamera's first).
    public static func arguments(id: String?, request: CameraFormatRequest, noFrameTimeout: Double) -> [String] {
        var arguments = ["camera-helper", "--source", "libcamera", "--size", request.size.description,
                         "--fps", String(request.framesPerSecond), "--lost-after", String(noFrameTimeout)]
        if let id { arguments += ["--id", id] }
        if let fourcc = request.preferredFourCC { arguments += ["--pixel-format", fourcc] }
        return arguments
    }

    /// Starts `program` (kioskcam) as the camera's helper and waits until it has opened it.
    /// - Throws: `CameraHelperError`: the helper's own words (libcamera's error, with its hint).
    public init(program: String, id: String?, request: CameraFormatRequest, noFrameTimeout: Double) throws(CameraHelperError) {
        camera = try HelperCamera(program: program, arguments: Self.arguments(id: id, request: request, noFrameTimeout: noFrameTimeout),
                                  noFrameTimeout: noFrameTimeout)
        guard let details = try? JSONDecoder().decode(LibcameraHelperDetails.self, from: camera.details) else {
            camera.stop()
            throw CameraHelperError("the camera helper did not describe a libcamera camera")
        }
        self.details = details
    }

    public func start(into sink: CaptureSink) throws { try camera.start(into: sink) }
    public func stop() { camera.stop() }

    public func apply(_ request: LibcameraSettingsRequest) -> [LibcameraControlPlan.Outcome] {
        switch ask(.apply(request)) {
        case .applied(let outcomes)?: return outcomes
        default: return [LibcameraControlPlan.Outcome(setting: "controls", problem: "the camera helper did not answer")]
        }
    }

    public func focus(at point: PicturePoint, continuous: Bool) -> (plan: LibcameraFocusPlan, problem: String?) {
        switch ask(.focus(point, continuous: continuous)) {
        case .focused(let plan, let problem)?: return (plan, problem)
        default:
            let plan = LibcameraFocusPlan(point: point, offered: [], cropMaximum: nil, crop: nil, continuous: continuous)
            return (plan, "the camera helper did not answer")
        }
    }

    private func ask(_ call: LibcameraHelperCall) -> LibcameraHelperAnswer? {
        guard let payload = try? JSONEncoder().encode(call), let answer = camera.call(payload) else { return nil }
        return try? JSONDecoder().decode(LibcameraHelperAnswer.self, from: answer)
    }
}
