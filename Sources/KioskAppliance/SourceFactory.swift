import Foundation
import Glibc
import KioskCore
import KioskMedia
import KioskRecording
import KioskSources
import KioskALSA
import KioskV4L2
import Logging

/// Something done with a V4L2 camera each time it is opened again after an unplug
/// (the daemon gives it its run-time settings back). Set once, before capture starts.
public final class CameraReopenHook: Sendable {
    private let action = Locked<(@Sendable (V4L2Camera) -> [String])?>(nil)
    public init() {}
    func set(_ action: @escaping @Sendable (V4L2Camera) -> [String]) { self.action.withLock { $0 = action } }
    func run(_ camera: V4L2Camera) -> [String] { action.withLock { $0 }?(camera) ?? [] }
}

/// Builds the capture sources the configuration names, and says which were chosen.
public enum SourceFactory {
    public static func camera(_ configuration: Configuration, realtime: Bool, logger: Logger,
                              reopened: CameraReopenHook = CameraReopenHook()) throws -> VideoSource {
        let camera = configuration.camera
        let format = VideoFormat(size: camera.size, pixelFormat: camera.builtInPixelFormat, framesPerSecond: camera.framesPerSecond)
        switch camera.source {
        case .device(let path):
            return try openV4L2(path, configuration, logger: logger, reopened: reopened)
        case .libcamera(let id):
            return try openLibcamera(id, configuration, logger: logger)
        case .automatic:
            // libcamera first: a Raspberry Pi camera module is only usable through it (its
            // /dev/video nodes give raw sensor data). Where it lists nothing, as before.
            // USB cameras libcamera lists (its uvcvideo pipeline) stay with V4L2, as before.
            // Asked through the camera helper, which alone loads libcamera: an abort while
            // it enumerates ends the helper, and V4L2 is tried next.
            do {
                let ids = try LibcameraListing.ask(program: CameraHelperProgram.path).cameras.map(\.id)
                if let id = ids.first(where: { !LibcameraStreamChoice.isUSBCamera(id: $0) }) {
                    logger.notice("camera: auto: libcamera lists \(id) (of \(ids.count)); using it, as a camera module works only through libcamera")
                    return try openLibcamera(id, configuration, logger: logger)
                }
            } catch {
                logger.notice("camera: auto: libcamera's cameras were not listed (\(error)); trying V4L2")
            }
            if let found = V4L2Discovery.cameras().first {
                return try openV4L2(found.path, configuration, logger: logger, reopened: reopened)
            }
            let camera = TestPatternCamera(format: format)
            logger.notice("camera: no camera found; using the built-in test pattern, \(camera.format)")
            return camera
        case .testPattern:
            let camera = TestPatternCamera(format: format, burnsClock: configuration.camera.testClock)
            logger.notice("camera: built-in test pattern, \(camera.format)\(configuration.camera.testClock ? ", with its clock burned in" : "")")
            return camera
        case .rawFile(let path):
            logger.info("camera: raw frames from \(path), \(format), \(realtime ? "real time" : "as fast as possible")")
            do {
                return try RawFileCamera(path: path, format: format, realtime: realtime)
            } catch {
                throw ApplianceError(error.description)
            }
        }
    }

    /// Opens a V4L2 camera, applies the configured controls, and puts it under a
    /// supervisor that reopens it after an unplug.
    private static func openV4L2(_ path: String, _ configuration: Configuration, logger: Logger,
                                 reopened: CameraReopenHook) throws -> VideoSource {
        let c = configuration.camera
        let request = CameraFormatRequest(size: c.size, framesPerSecond: c.framesPerSecond, preferredFourCC: c.pixelFormat?.rawValue)
        @Sendable func open(again: Bool) throws -> VideoSource {
            let camera = try V4L2Camera(path: path, request: request, noFrameTimeout: c.lostAfterSeconds)
            for line in camera.controls.apply(zoom: c.zoom, focus: c.focus, exposure: c.exposure, whiteBalance: c.whiteBalance,
                                              brightness: c.brightness, contrast: c.contrast) {
                logger.info("camera \(path): \(line)")
            }
            if again {
                for line in reopened.run(camera) { logger.info("camera \(path) is back: \(line)") }
            }
            return camera
        }
        let first: VideoSource
        do {
            first = try open(again: false)
        } catch {
            throw ApplianceError("\(error)")
        }
        if let camera = first as? V4L2Camera {
            logger.info("camera: \(path) (\(camera.device.capabilities.card)): \(camera.negotiation)")
        }
        // The record loop (or the daemon) reports losses together with what it does
        // about the recording; here only the camera's own progress is logged.
        return CameraSupervisor(camera: first, open: { try open(again: true) }) { health in
            if case .running = health { logger.info("camera \(path) is delivering frames") }
        }
    }

    /// Opens a libcamera camera (nil: the first it lists) in a camera helper process,
    /// applies the configured controls, and puts it under a supervisor that opens a fresh
    /// helper after a disconnect — or after libcamera aborted the helper, as 0.0.3 does
    /// when a camera module comes back ("duplicated ID"); the daemon stays up.
    private static func openLibcamera(_ id: String?, _ configuration: Configuration, logger: Logger) throws -> VideoSource {
        let c = configuration.camera
        let request = CameraFormatRequest(size: c.size, framesPerSecond: c.framesPerSecond, preferredFourCC: c.pixelFormat?.rawValue)
        let program = CameraHelperProgram.path
        @Sendable func open() throws -> LibcameraHelperCamera {
            let camera = try LibcameraHelperCamera(program: program, id: id, request: request, noFrameTimeout: c.lostAfterSeconds)
            for outcome in camera.apply(zoom: c.zoom, focus: c.focus, exposure: c.exposure, whiteBalance: c.whiteBalance,
                                        brightness: c.brightness, contrast: c.contrast) {
                logger.info("\(camera.name): \(outcome.line)")
            }
            return camera
        }
        let first: LibcameraHelperCamera
        do {
            first = try open()
        } catch {
            throw ApplianceError("\(error)")
        }
        let model = first.model.isEmpty ? "" : " (\(first.model))"
        logger.info("camera: \(first.name)\(model), libcamera \(first.libcameraVersion), in helper pid \(first.camera.pid): \(first.negotiation)")
        return CameraSupervisor(camera: first, open: { try open() }) { [name = first.name] health in
            if case .running = health { logger.info("camera \(name) is delivering frames") }
        }
    }
}
