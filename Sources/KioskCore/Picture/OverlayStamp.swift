import Foundation

/// The fields of the overlay that change while the appliance runs (the event's label),
/// set by their owner on any thread and read by every painter.
public final class OverlayFields: Sendable {
    private let values: Locked<OverlayText.Values>

    public init(deviceName: String, deviceID: String) {
        values = Locked(OverlayText.Values(deviceName: deviceName, deviceID: deviceID))
    }

    /// The label `{event}` shows ("" while no clip records).
    public func setEvent(_ label: String) { values.withLock { $0.event = label } }

    public var current: OverlayText.Values { values.withLock { $0 } }
}

/// What every overlay of one appliance draws (`[overlay]`): the text, where, how big,
/// the camera's orientation, the glyphs and the changing fields. Each thread that draws
/// makes its own `OverlayStamp` from it.
public struct OverlaySpec: Sendable {
    public let text: OverlayText
    public let position: OverlayPosition
    public let heightFraction: Double
    public let orientation: PictureOrientation
    public let fields: OverlayFields
    public let atlasMaker: GlyphAtlasMaker

    public init(text: OverlayText, position: OverlayPosition, heightFraction: Double, orientation: PictureOrientation,
                fields: OverlayFields, atlasMaker: @escaping GlyphAtlasMaker) {
        self.text = text
        self.position = position
        self.heightFraction = heightFraction
        self.orientation = orientation
        self.fields = fields
        self.atlasMaker = atlasMaker
    }

    public func makeStamp() -> OverlayStamp { OverlayStamp(spec: self) }
}

/// One thread's overlay: a painter per picture size and the text of the current second.
public final class OverlayStamp {
    public let spec: OverlaySpec
    public private(set) var painter: OverlayPainter?
    private var cached: (second: Int64, values: OverlayText.Values, text: String)?
    /// The zone's offset and name for the current second: asked of the C library once a
    /// second, not for every frame when the text has `{frame}`.
    private var zone: (second: Int64, offset: Int, name: String)?
    private var failedSize: FrameSize?
    /// Pictures the text was drawn into.
    public private(set) var picturesDrawn = 0

    init(spec: OverlaySpec) { self.spec = spec }

    /// Draws the text for a picture captured at `unixSeconds` (wall clock), the camera's
    /// frame `frame`, into `picture`.
    public func draw(into picture: PicturePlanes, unixSeconds: Double, frame: Int) {
        if painter?.sensor != picture.size || painter?.fullRange != picture.fullRange {
            guard failedSize != picture.size else { return }
            painter = OverlayPainter(sensor: picture.size, orientation: spec.orientation, position: spec.position,
                                     heightFraction: spec.heightFraction, fullRange: picture.fullRange, atlasMaker: spec.atlasMaker)
            failedSize = painter == nil ? picture.size : nil
        }
        guard let painter else { return }
        if painter.draw(text(unixSeconds: unixSeconds, frame: frame), into: picture) { picturesDrawn += 1 }
    }

    /// The text for a picture captured at `unixSeconds`, the camera's frame `frame`: made
    /// again only when the second, a field or (if shown) the frame number changes. The
    /// screen's preview draws it with cairo (`overlay.preview`).
    public func text(unixSeconds: Double, frame: Int) -> String {
        let second = unixSeconds.isFinite ? Int64(exactly: unixSeconds.rounded(.down)) ?? 0 : 0
        var values = spec.fields.current
        values.frame = spec.text.usesFrameNumber ? frame : 0
        if let cached, cached.second == second, cached.values == values { return cached.text }
        if zone?.second != second {
            let local = LocalZone.offset(atUnixSeconds: second)
            zone = (second, local.seconds, local.abbreviation)
        }
        let text = spec.text.render(unixSeconds: second, utcOffsetSeconds: zone?.offset ?? 0, zoneName: zone?.name ?? "UTC",
                                    values: values)
        cached = (second, values, text)
        return text
    }
}
