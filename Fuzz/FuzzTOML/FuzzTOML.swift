import FuzzSupport
import KioskCore

/// The config file as the CLI reads it: any text through `TOMLDocument`, then through the
/// schema into a `Configuration`, then every value the daemon derives from one.
///
/// Properties beyond "no trap":
/// - an error names a line of the file and a column ≥ 1;
/// - a document written back out (every key as a quoted dotted path, every value in its
///   canonical form) reads back to the same keys and values;
/// - that rewritten file gives the same `Configuration` (or an error at the same key).
func fuzzTOML(_ bytes: UnsafeRawBufferPointer) {
    // The CLI refuses text that is not UTF-8; lossy decoding reaches a superset of that.
    let text = String(decoding: bytes, as: UTF8.self)
    fuzzOverlayText(text)
    let lineCount = text.unicodeScalars.reduce(1) { $1 == "\n" ? $0 + 1 : $0 }

    let document: TOMLDocument
    do {
        document = try TOMLDocument(parsing: text)
    } catch {
        Fuzz.require((1...lineCount).contains(error.line) && error.column >= 1, "syntax error outside the file: \(error)")
        Fuzz.require(!error.message.isEmpty, "empty syntax error message")
        checkConfiguration(text, lineCount: lineCount)
        return
    }
    for entry in document.entries {
        Fuzz.require((1...lineCount).contains(entry.line), "entry \(entry.dottedPath) on line \(entry.line) of \(lineCount)")
        Fuzz.require(!entry.path.isEmpty, "an entry without a key")
    }

    let rewritten = document.entries.map { TOMLWriter.line($0) }.joined()
    let reread: TOMLDocument
    do {
        reread = try TOMLDocument(parsing: rewritten)
    } catch {
        Fuzz.require(false, "the rewritten document does not parse: \(error)\n\(rewritten)")
        return
    }
    Fuzz.require(reread.entries.map(\.path) == document.entries.map(\.path), "keys changed on rewrite")
    Fuzz.require(reread.entries.map(\.value) == document.entries.map(\.value), "values changed on rewrite:\n\(rewritten)")

    let original = checkConfiguration(text, lineCount: lineCount)
    let again = checkConfiguration(rewritten, lineCount: document.entries.count + 1)
    switch (original, again) {
    case (.success(let a), .success(let b)):
        Fuzz.require(a == b, "the rewritten file gives another configuration")
    case (.failure(let a), .failure(let b)):
        Fuzz.require(a.key == b.key && a.message == b.message, "the rewritten file fails differently: \(a) / \(b)")
    default:
        Fuzz.require(false, "the rewritten file is judged differently: \(original) / \(again)")
    }
}

/// The schema layer, as `CommonOptions.loadConfiguration` calls it, and what the daemon
/// computes from a configuration it accepted.
@discardableResult
func checkConfiguration(_ text: String, lineCount: Int) -> Result<Configuration, ConfigurationError> {
    do {
        let configuration = try Configuration(toml: text, file: "fuzz.toml")
        derive(configuration)
        return .success(configuration)
    } catch {
        if let line = error.line { Fuzz.require((1...lineCount).contains(line), "config error outside the file: \(error)") }
        Fuzz.require(!error.message.isEmpty, "empty config error message")
        _ = error.description
        return .failure(error)
    }
}

/// Every value the appliance derives from the settings: none may trap on a configuration
/// the schema accepted.
func derive(_ c: Configuration) {
    Fuzz.require(Configuration.isValidFrameSize(c.camera.size), "accepted camera size \(c.camera.size)")
    _ = c.effectiveVideoBitrate
    _ = c.segmentPolicy
    let throttle = c.lock.throttle
    _ = throttle.lockoutSeconds(afterFailures: throttle.failuresBeforeLockout + 40)
    _ = "\(c.camera.source) \(c.microphone.source) \(c.screen.framebuffer) \(c.touch.device) \(c.buttons.chip)"
    let screen = c.screen.rotation.swapsAxes ? c.screen.virtualSize.swapped : c.screen.virtualSize
    let transform = TouchTransform(settings: c.touch, xRange: AxisRange(minimum: 0, maximum: 4095),
                                   yRange: AxisRange(minimum: 0, maximum: 4095), screen: screen,
                                   screenRotation: c.screen.rotation)
    for (x, y) in [(Int32.min, Int32.min), (0, 0), (Int32.max, Int32.max)] {
        let point = transform.point(x: x, y: y)
        Fuzz.require((0..<max(1, screen.width)).contains(point.x) && (0..<max(1, screen.height)).contains(point.y),
                     "touch point \(point) off the \(screen) screen")
    }
    _ = EncodingPolicy.keyframeInterval(framesPerSecond: c.camera.framesPerSecond)
}

/// The same text as an overlay template (`overlay.text`): parsed, rendered at the ends of
/// time and any offset, and drawn into a small picture at every corner and orientation.
func fuzzOverlayText(_ text: String) {
    guard let template = try? OverlayText(text) else { return }
    let values = OverlayText.Values(deviceName: text, deviceID: "id", frame: Int.max, event: text)
    var rendered = ""
    for (seconds, offset) in [(Int64.min, Int.min), (Int64.max, Int.max), (0, 0), (1_795_916_443, 3600), (-1, -1)] {
        rendered = template.render(unixSeconds: seconds, utcOffsetSeconds: offset, zoneName: "Z", values: values)
    }
    let size = FrameSize(width: 64, height: 48)
    var pixels = [UInt8](repeating: 128, count: PixelFormat.yuv420.frameByteCount(size))
    pixels.withUnsafeMutableBytes { bytes in
        guard let base = bytes.baseAddress,
              let planes = PicturePlanes(packed: base, byteCount: bytes.count,
                                         format: VideoFormat(size: size, pixelFormat: .yuv420, framesPerSecond: 30)) else { return }
        for position in OverlayPosition.allCases {
            for rotation in ScreenRotation.allCases {
                let painter = OverlayPainter(sensor: size, orientation: PictureOrientation(rotation: rotation), position: position,
                                             heightFraction: 0.2, atlasMaker: { GlyphAtlas.dots(cellHeight: $0) })
                painter?.draw(rendered, into: planes)
                painter?.draw(String(rendered.reversed()), into: planes)
                if let painter, !painter.sensorRect.isEmpty {
                    let box = painter.sensorRect.clamped(to: size)
                    Fuzz.require(box == painter.sensorRect, "the overlay's box \(painter.sensorRect) leaves the \(size) picture")
                }
            }
        }
    }
}

/// Writes entries back as TOML in the one form the reader must accept for any value.
enum TOMLWriter {
    static func line(_ entry: TOMLEntry) -> String {
        entry.path.map(quoted).joined(separator: ".") + " = " + value(entry.value) + "\n"
    }

    static func value(_ value: TOMLValue) -> String {
        switch value {
        case .string(let text): quoted(text)
        case .integer(let number): String(number)
        case .float(let number): String(number)  // shortest form that reads back exactly
        case .boolean(let flag): String(flag)
        case .array(let items): "[" + items.map(Self.value).joined(separator: ", ") + "]"
        }
    }

    static func quoted(_ text: String) -> String {
        var out = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case _ where scalar.value < 0x20 || scalar.value == 0x7F:
                let hex = String(scalar.value, radix: 16, uppercase: true)
                out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }
}

@main
enum Main {
    static func main() { Fuzz.main("FuzzTOML", fuzzTOML) }
}
