import Foundation
import Glibc
import KioskCore

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
    /// libcamera's version in the helper, e.g. "0.0.3".
    public var version: String

    public init(id: String, model: String, negotiation: String, controlLimits: [String: LibcameraControlLimits], version: String) {
        self.id = id
        self.model = model
        self.negotiation = negotiation
        self.controlLimits = controlLimits
        self.version = version
    }
}

/// The calls a libcamera helper answers, and its answers.
public enum LibcameraHelperCall: Codable {
    case apply(LibcameraSettingsRequest)
    case focus(PicturePoint, continuous: Bool)
}

public enum LibcameraHelperAnswer: Codable {
    case applied([LibcameraControlPlan.Outcome])
    case focused(LibcameraFocusPlan, problem: String?)
}

/// A libcamera camera opened in a camera helper process (`kioskcam-camera --source
/// libcamera`), so that libcamera aborting — as 0.0.3 does when a camera module
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
    public var libcameraVersion: String { details.version }

    /// The helper's arguments for camera `id` (nil: libcamera's first).
    public static func arguments(id: String?, request: CameraFormatRequest, noFrameTimeout: Double) -> [String] {
        var arguments = ["--source", "libcamera", "--size", request.size.description,
                         "--fps", String(request.framesPerSecond), "--lost-after", String(noFrameTimeout)]
        if let id { arguments += ["--id", id] }
        if let fourcc = request.preferredFourCC { arguments += ["--pixel-format", fourcc] }
        return arguments
    }

    /// Starts `program` (kioskcam-camera) as the camera's helper and waits until it has opened it.
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

/// What `kioskcam probe` prints about a libcamera camera.
public struct LibcameraCameraDescription: Codable, Sendable, Equatable {
    public struct Control: Codable, Sendable, Equatable {
        public var name: String
        public var minimum: Double
        public var maximum: Double
        public var defaultValue: Double

        public init(name: String, minimum: Double, maximum: Double, defaultValue: Double) {
            self.name = name
            self.minimum = minimum
            self.maximum = maximum
            self.defaultValue = defaultValue
        }
    }

    public var id: String
    public var model: String
    /// The VideoRecording stream's formats (libcamera's names).
    public var formats: [LibcameraFormatOffer]
    public var controls: [Control]
    /// Why the camera could not be described, if it could not.
    public var error: String?

    public init(id: String, model: String = "", formats: [LibcameraFormatOffer] = [], controls: [Control] = [], error: String? = nil) {
        self.id = id
        self.model = model
        self.formats = formats
        self.controls = controls
        self.error = error
    }
}

/// libcamera's cameras as a camera helper lists them (`kioskcam-camera --list`, or
/// `--describe` with formats and controls): asked in a process of its own, so that
/// kioskcam itself never loads libcamera, and libcamera aborting while it enumerates ends
/// only that process.
public struct LibcameraListing: Codable, Sendable, Equatable {
    /// libcamera's version in the helper, e.g. "0.0.3".
    public var version: String
    public var cameras: [LibcameraCameraDescription]
    /// Why libcamera did not start, if it did not.
    public var error: String?

    public init(version: String, cameras: [LibcameraCameraDescription], error: String? = nil) {
        self.version = version
        self.cameras = cameras
        self.error = error
    }

    /// Runs `program --list` (or `--describe`) and reads what it prints.
    /// - Throws: `CameraHelperError` naming the program and how it ended, when it could not
    ///   be started, ended without a listing (libcamera aborted), or took over `timeout` s.
    public static func ask(program: String, describe: Bool = false, timeout: Double = 30) throws(CameraHelperError) -> LibcameraListing {
        var ends: [Int32] = [-1, -1]
        guard pipe(&ends) == 0 else {
            throw CameraHelperError("cannot list libcamera's cameras: pipe: \(String(cString: strerror(errno)))")
        }
        // pipe2 is hidden from Swift (_GNU_SOURCE); the child gets the write end as its output.
        for end in ends { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
        let child: ChildProcess
        do {
            child = try ChildProcess(program: program, arguments: [describe ? "--describe" : "--list"], output: ends[1])
        } catch {
            close(ends[0])
            close(ends[1])
            throw CameraHelperError("cannot list libcamera's cameras: \(error) (the camera helper ships beside kioskcam)")
        }
        close(ends[1])
        defer { close(ends[0]) }
        let deadline = Date(timeIntervalSinceNow: timeout)
        var output = Data()
        var chunk = [UInt8](repeating: 0, count: 16_384)
        while output.count < 16 << 20 {
            let left = deadline.timeIntervalSinceNow
            guard left > 0 else { break }
            var ready = pollfd(fd: ends[0], events: Int16(POLLIN), revents: 0)
            let polled = poll(&ready, 1, Int32(min(left, 1) * 1000) + 1)
            if polled < 0 && errno == EINTR { continue }
            guard polled > 0 else { continue }
            let count = chunk.withUnsafeMutableBytes { read(ends[0], $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { break }
            output.append(contentsOf: chunk[0..<count])
        }
        guard child.wait(timeout: max(deadline.timeIntervalSinceNow, 1)) else {
            child.signal(SIGKILL)
            _ = child.wait(timeout: 5)
            throw CameraHelperError("\(program) did not list libcamera's cameras within \(Int(timeout)) s")
        }
        guard child.status.map({ $0 == 0 }) == true, let listing = try? JSONDecoder().decode(LibcameraListing.self, from: output) else {
            throw CameraHelperError("\(program) ended (\(child.ending)) without listing libcamera's cameras")
        }
        return listing
    }
}

/// Where the camera helper program is: `kioskcam-camera` beside the program that runs
/// (the test bundle's folder holds one too), or beside `KIOSKCAM_PROGRAM` where that
/// names which kioskcam to run.
public enum CameraHelperProgram {
    public static let name = "kioskcam-camera"

    public static var path: String {
        let named = ProcessInfo.processInfo.environment["KIOSKCAM_PROGRAM"].flatMap { $0.isEmpty ? nil : $0 }
        return RunningProgram.sibling(name, of: named ?? RunningProgram.path)
    }
}
