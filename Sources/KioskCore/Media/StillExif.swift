/// The EXIF block (an APP1 segment holding a small big-endian TIFF) a still carries:
/// when it was taken, which device took it, and its orientation.
///
/// Why: a photo copied off the board loses its folder and file name; the time and the
/// device id inside the file stay with it, and every photo viewer reads EXIF.
/// Pure: the bytes are built from checked lengths; any strings give a valid block.
public struct StillExif: Sendable, Equatable {
    /// Local time the picture was taken.
    public var taken: LocalTimestamp
    /// The local time's offset from UTC in minutes (EXIF 2.31 `OffsetTimeOriginal`); nil when unknown.
    public var utcOffsetMinutes: Int?
    /// The device id (a UUID); printable ASCII is kept, up to 64 characters.
    public var deviceID: String?
    /// EXIF orientation 1…8. kioskcam turns the pixels themselves (`camera.rotation`),
    /// so its stills say 1, "as stored"; kept a field so a viewer is never left guessing.
    public var orientation: UInt16
    /// The writing program, e.g. "kioskcam 1.4.0".
    public var software: String?

    public init(taken: LocalTimestamp, utcOffsetMinutes: Int? = nil, deviceID: String? = nil, orientation: UInt16 = 1,
                software: String? = nil) {
        self.taken = taken
        self.utcOffsetMinutes = utcOffsetMinutes
        self.deviceID = deviceID
        self.orientation = (1...8).contains(orientation) ? orientation : 1
        self.software = software
    }

    /// TIFF tags used (EXIF 2.32 / TIFF 6.0).
    enum Tag: UInt16 {
        case imageDescription = 0x010E, make = 0x010F, model = 0x0110, orientation = 0x0112, software = 0x0131
        case dateTime = 0x0132, exifPointer = 0x8769
        case exifVersion = 0x9000, dateTimeOriginal = 0x9003, offsetTimeOriginal = 0x9011, bodySerialNumber = 0xA431
    }

    /// One IFD entry's value: ASCII (NUL added), SHORT, LONG or UNDEFINED bytes.
    enum Value {
        case ascii(String), short(UInt16), long(UInt32), undefined([UInt8])
    }

    /// "2026:11:24 10:55:00", EXIF's date format.
    var dateText: String {
        func pad(_ value: Int, _ width: Int) -> String {
            let digits = String(max(0, value))
            return String(repeating: "0", count: max(0, width - digits.count)) + digits
        }
        return "\(pad(taken.year, 4)):\(pad(taken.month, 2)):\(pad(taken.day, 2)) \(pad(taken.hour, 2)):\(pad(taken.minute, 2)):\(pad(taken.second, 2))"
    }

    /// "+01:00"; nil without an offset or with one beyond ±14 h.
    var offsetText: String? {
        guard let minutes = utcOffsetMinutes, abs(minutes) <= 14 * 60 else { return nil }
        let sign = minutes < 0 ? "-" : "+"
        let hours = abs(minutes) / 60, rest = abs(minutes) % 60
        return sign + (hours < 10 ? "0" : "") + String(hours) + ":" + (rest < 10 ? "0" : "") + String(rest)
    }

    /// Printable ASCII only (EXIF ASCII), at most `limit` characters.
    static func ascii(_ text: String, limit: Int = 64) -> String {
        String(String.UnicodeScalarView(text.unicodeScalars.filter { (0x20...0x7E).contains($0.value) }.prefix(limit)))
    }

    /// The APP1 segment: marker, length, "Exif\0\0" and the TIFF block.
    public var app1Segment: [UInt8] {
        let device = deviceID.map { Self.ascii($0) }.flatMap { $0.isEmpty ? nil : $0 }
        var first: [(Tag, Value)] = []
        if let device { first.append((.imageDescription, .ascii("kioskcam device " + device))) }
        first += [(.make, .ascii("KioskCam")), (.model, .ascii("kioskcam")), (.orientation, .short(orientation))]
        if let software = software.map({ Self.ascii($0) }), !software.isEmpty { first.append((.software, .ascii(software))) }
        first.append((.dateTime, .ascii(dateText)))
        first.append((.exifPointer, .long(0)))   // patched below, once IFD0's size is known
        var exif: [(Tag, Value)] = [(.exifVersion, .undefined(Array("0232".utf8))), (.dateTimeOriginal, .ascii(dateText))]
        if let offset = offsetText { exif.append((.offsetTimeOriginal, .ascii(offset))) }
        if let device { exif.append((.bodySerialNumber, .ascii(device))) }

        let ifd0Offset = 8
        let exifOffset = ifd0Offset + Self.ifdSize(first)
        first[first.count - 1].1 = .long(UInt32(exifOffset))
        var tiff: [UInt8] = [0x4D, 0x4D, 0x00, 0x2A, 0, 0, 0, 8]   // "MM", 42, IFD0 at 8
        tiff += Self.ifd(first, at: ifd0Offset)
        tiff += Self.ifd(exif, at: exifOffset)
        let payload = Array("Exif".utf8) + [0, 0] + tiff
        let length = payload.count + 2
        return [0xFF, 0xE1, UInt8(length >> 8 & 0xFF), UInt8(length & 0xFF)] + payload
    }

    /// Bytes an IFD takes with the values that do not fit in its entries.
    static func ifdSize(_ entries: [(Tag, Value)]) -> Int {
        2 + entries.count * 12 + 4 + entries.reduce(0) { total, entry in
            let bytes = bytes(of: entry.1)
            return total + (bytes.count > 4 ? bytes.count + bytes.count % 2 : 0)
        }
    }

    static func bytes(of value: Value) -> [UInt8] {
        switch value {
        case .ascii(let text): Array(text.utf8) + [0]
        case .short(let number): [UInt8(number >> 8), UInt8(number & 0xFF)]
        case .long(let number): [UInt8(number >> 24), UInt8(number >> 16 & 0xFF), UInt8(number >> 8 & 0xFF), UInt8(number & 0xFF)]
        case .undefined(let bytes): bytes
        }
    }

    /// One IFD at `offset` in the TIFF block: entries sorted by tag, no next IFD, then the
    /// values longer than 4 bytes (each at an even offset, as TIFF asks).
    static func ifd(_ entries: [(Tag, Value)], at offset: Int) -> [UInt8] {
        let sorted = entries.sorted { $0.0.rawValue < $1.0.rawValue }
        var table: [UInt8] = [UInt8(sorted.count >> 8), UInt8(sorted.count & 0xFF)]
        var extra: [UInt8] = []
        var nextValue = offset + 2 + sorted.count * 12 + 4
        for (tag, value) in sorted {
            let data = bytes(of: value)
            let (type, count): (UInt16, Int) = switch value {
            case .ascii: (2, data.count)
            case .short: (3, 1)
            case .long: (4, 1)
            case .undefined: (7, data.count)
            }
            table += [UInt8(tag.rawValue >> 8), UInt8(tag.rawValue & 0xFF), 0, UInt8(type)]
            table += bytes(of: .long(UInt32(count)))
            if data.count <= 4 {
                table += data + [UInt8](repeating: 0, count: 4 - data.count)
            } else {
                table += bytes(of: .long(UInt32(nextValue)))
                extra += data
                if data.count % 2 == 1 { extra.append(0) }
                nextValue += data.count + data.count % 2
            }
        }
        return table + [0, 0, 0, 0] + extra
    }

    /// `jpeg` with `app1Segment` right after its start-of-image marker (where EXIF says
    /// it belongs), replacing an EXIF block already there; nil when `jpeg` does not
    /// start like a JPEG.
    public func inserted(into jpeg: [UInt8]) -> [UInt8]? {
        guard jpeg.count >= 4, jpeg[0] == 0xFF, jpeg[1] == 0xD8 else { return nil }
        var rest = jpeg[2...]
        // An encoder's own APP1 "Exif" (none from libavcodec today) would make two.
        if rest.count >= 10, rest[rest.startIndex] == 0xFF, rest[rest.startIndex + 1] == 0xE1,
           Array(rest[(rest.startIndex + 4)..<(rest.startIndex + 8)]) == Array("Exif".utf8) {
            let length = Int(rest[rest.startIndex + 2]) << 8 | Int(rest[rest.startIndex + 3])
            guard length >= 2, length + 2 <= rest.count else { return nil }
            rest = rest.dropFirst(2 + length)
        }
        return [0xFF, 0xD8] + app1Segment + rest
    }
}
