import Foundation
import KioskCore

/// Finds the cameras on this machine (`kioskcam probe`, and `camera.source = "auto"`).
public enum V4L2Discovery {
    /// Every `/dev/video*` node that captures video, described in full. Nodes that are
    /// not cameras (metadata nodes, encoders) and nodes that cannot be opened are left
    /// out — `scan()` says why. Empty on a machine with no cameras.
    public static func cameras(in directory: String = "/dev") -> [CameraDescription] {
        scan(in: directory).cameras
    }

    /// Every `/dev/video*` node: the cameras, and the others with the reason they were skipped.
    public static func scan(in directory: String = "/dev") -> DiscoveryReport {
        var report = DiscoveryReport(cameras: [], skipped: [])
        for path in deviceNodes(in: directory) {
            do {
                let device = try V4L2Device(path: path)
                defer { device.close() }
                do {
                    try device.requireStreamingCapture()
                } catch {
                    report.skipped.append(.init(path: path, reason: error.detail))
                    continue
                }
                report.cameras.append(try CameraDescription(device))
            } catch {
                report.skipped.append(.init(path: path, reason: error.description))
            }
        }
        return report
    }

    /// `/dev/video0`, `/dev/video1`, …, `/dev/video10` — in numeric order.
    static func deviceNodes(in directory: String) -> [String] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
        return names.compactMap { name -> (Int, String)? in
            guard name.hasPrefix("video"), let number = Int(name.dropFirst(5)) else { return nil }
            return (number, directory + "/" + name)
        }.sorted { $0.0 < $1.0 }.map(\.1)
    }
}

/// What `scan()` found.
public struct DiscoveryReport: Sendable, Codable {
    public struct Skipped: Sendable, Codable, Hashable {
        public var path: String
        public var reason: String
    }

    public var cameras: [CameraDescription]
    public var skipped: [Skipped]
}

/// One camera as `kioskcam probe --json` prints it.
public struct CameraDescription: Sendable, Codable, Hashable {
    public struct Format: Sendable, Codable, Hashable {
        public var fourcc: String
        public var description: String
        public var compressed: Bool
        /// Software-converted by libv4l2; listed, never chosen.
        public var emulated: Bool
        /// Whether kioskcam can record it (`CameraFormatNegotiation.usableFourCCs`: raw
        /// YUV, RGB, 8-bit Bayer and greyscale layouts, and MJPG/JPEG).
        public var usable: Bool
        public var sizes: [Size]
    }

    /// One discrete size, or a stepwise range (then `maximum` and `step` are set, and
    /// `frameRates` are those at the largest size).
    public struct Size: Sendable, Codable, Hashable {
        public var width: Int
        public var height: Int
        public var maximumWidth: Int?
        public var maximumHeight: Int?
        public var stepWidth: Int?
        public var stepHeight: Int?
        /// Frames per second, e.g. [30, 25, 29.97]; empty when the driver lists none.
        public var frameRates: [Double]
        /// For a continuous rate range: its bounds.
        public var minimumFrameRate: Double?
        public var maximumFrameRate: Double?
    }

    public struct Control: Sendable, Codable, Hashable {
        public var name: String
        public var id: UInt32
        public var type: String
        public var minimum: Int
        public var maximum: Int
        public var step: Int
        public var `default`: Int
        public var value: Int?
        public var readOnly: Bool
        public var inactive: Bool
        public var menu: [String: String]?
    }

    public var path: String
    public var driver: String
    public var card: String
    public var bus: String
    public var version: String
    public var capabilities: [String]
    public var formats: [Format]
    public var controls: [Control]
}

extension CameraDescription {
    /// Asks `device` everything.
    /// - Throws: `V4L2Error` when the device stops answering (e.g. unplugged mid-probe).
    public init(_ device: V4L2Device) throws(V4L2Error) {
        let caps = device.capabilities
        path = device.path
        driver = caps.driver
        card = caps.card
        bus = caps.busInfo
        version = caps.version
        capabilities = caps.names
        let listed = try device.formats()
        let emulated = Set(listed.filter(\.emulated).map(\.fourcc))
        let compressed = Set(listed.filter(\.compressed).map(\.fourcc))
        formats = try device.formatOffers(includeEmulated: true).map { offer in
            Format(fourcc: offer.fourcc, description: offer.description, compressed: compressed.contains(offer.fourcc),
                   emulated: emulated.contains(offer.fourcc), usable: CameraDelivery(fourcc: offer.fourcc) != nil,
                   sizes: offer.sizes.map(Self.size))
        }
        controls = try device.controls().map { control in
            Control(name: control.name, id: control.id, type: control.type.rawValue, minimum: control.minimum,
                    maximum: control.maximum, step: control.step, default: control.defaultValue, value: control.value,
                    readOnly: control.readOnly, inactive: control.inactive,
                    menu: control.menu.isEmpty ? nil
                        : Dictionary(control.menu.map { (String($0.index), $0.name) }, uniquingKeysWith: { first, _ in first }))
        }
    }

    static func size(_ offer: CameraSizeOffer) -> Size {
        var size: Size
        switch offer.sizes {
        case .discrete(let s):
            size = Size(width: s.width, height: s.height, frameRates: [])
        case .stepwise(let minimum, let maximum, let step):
            size = Size(width: minimum.width, height: minimum.height, maximumWidth: maximum.width,
                        maximumHeight: maximum.height, stepWidth: step.width, stepHeight: step.height, frameRates: [])
        }
        switch offer.rates {
        case .discrete(let rates): size.frameRates = rates.map { ($0.framesPerSecond * 1000).rounded() / 1000 }
        case .range(let minimum, let maximum):
            size.minimumFrameRate = minimum.framesPerSecond
            size.maximumFrameRate = maximum.framesPerSecond
        case .unknown: break
        }
        return size
    }
}
