import Foundation

/// What an MP4's header says about its length, read by the tests' own box walker (not
/// the code under test's `FragmentedMP4Scan`): players that trust the header show this.
public struct MP4HeaderLength: Equatable {
    /// The movie's timescale (`mvhd`), ticks per second.
    public var timescale: UInt64
    /// `mvhd`'s duration, in ticks; 0 when the writer never filled it in.
    public var movieTicks: UInt64
    /// `mehd`'s fragment duration, in ticks; nil when the file has no `mehd`.
    public var fragmentTicks: UInt64?

    public var movieSeconds: Double { timescale > 0 ? Double(movieTicks) / Double(timescale) : .nan }
    public var fragmentSeconds: Double? { fragmentTicks.map { timescale > 0 ? Double($0) / Double(timescale) : .nan } }

    public struct Unreadable: Error, CustomStringConvertible {
        public var description: String
    }

    /// Reads `mvhd` (and `mehd`, when there is one) from the file at `path`; version 0
    /// (32-bit) and version 1 (64-bit) boxes alike.
    public static func read(_ path: String) throws -> MP4HeaderLength {
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        guard let mvhd = box(["moov", "mvhd"], in: bytes[...]), mvhd.count > 8 else {
            throw Unreadable(description: "\(path): no whole moov/mvhd")
        }
        let wide = mvhd[mvhd.startIndex + 8] == 1
        guard mvhd.count >= (wide ? 40 : 28) else { throw Unreadable(description: "\(path): a torn mvhd") }
        var length = MP4HeaderLength(timescale: number(mvhd, at: wide ? 28 : 20, width: 4),
                                     movieTicks: number(mvhd, at: wide ? 32 : 24, width: wide ? 8 : 4))
        if let mehd = box(["moov", "mvex", "mehd"], in: bytes[...]) {
            let wideMehd = mehd.count > 8 && mehd[mehd.startIndex + 8] == 1
            guard mehd.count >= (wideMehd ? 20 : 16) else { throw Unreadable(description: "\(path): a torn mehd") }
            length.fragmentTicks = number(mehd, at: 12, width: wideMehd ? 8 : 4)
        }
        return length
    }

    /// The box at `path` (e.g. `["moov", "mvhd"]`), its own 8-byte header included; nil
    /// when a level is missing or a size runs past its parent.
    public static func box(_ path: [String], in bytes: ArraySlice<UInt8>) -> ArraySlice<UInt8>? {
        guard let name = path.first else { return bytes }
        var at = bytes.startIndex
        while at + 8 <= bytes.endIndex {
            let size = Int(number(bytes, at: at - bytes.startIndex, width: 4))
            guard size >= 8, size <= bytes.endIndex - at else { return nil }
            let type = String(decoding: bytes[(at + 4)..<(at + 8)], as: UTF8.self)
            if type == name {
                let found = bytes[at..<(at + size)]
                return path.count == 1 ? found : box(Array(path.dropFirst()), in: found.dropFirst(8))
            }
            at += size
        }
        return nil
    }

    /// A big-endian number of `width` bytes, `offset` bytes into `bytes`.
    public static func number(_ bytes: ArraySlice<UInt8>, at offset: Int, width: Int) -> UInt64 {
        bytes.dropFirst(offset).prefix(width).reduce(0) { $0 << 8 | UInt64($1) }
    }
}

/// What players make of a finished file: its length as three players' own code reads it,
/// where it really ends, and the bitrates its header states.
public enum PlayersRead {
    public struct Unreadable: Error, CustomStringConvertible {
        public var description: String
    }

    /// Seconds, by player: GStreamer (gst-discoverer), MediaInfo and ffprobe.
    public static func durations(_ path: String) throws -> [String: Double] {
        let discoverer = try requiredProgram("gst-discoverer-1.0", package: "gstreamer1.0-plugins-base-apps")
        let mediainfo = try requiredProgram("mediainfo", package: "mediainfo")
        let gst = try Tool.run(discoverer, [path]).stdout
        // "Duration: 0:00:05.005000000"
        guard let line = gst.split(separator: "\n").first(where: { $0.contains("Duration:") }),
              let clock = line.split(separator: " ").last?.split(separator: ":").compactMap({ Double($0) }), clock.count == 3
        else { throw Unreadable(description: "gst-discoverer gave no duration for \(path): \(gst)") }
        let info = try Tool.run(mediainfo, ["--Inform=General;%Duration%", path]).stdout
        let probe = try Tool.run("ffprobe", ["-v", "error", "-show_entries", "format=duration", "-of", "csv=p=0", path]).stdout
        guard let milliseconds = Double(info.trimmingCharacters(in: .whitespacesAndNewlines)),
              let seconds = Double(probe.trimmingCharacters(in: .whitespacesAndNewlines))
        else { throw Unreadable(description: "\(path): mediainfo said '\(info)', ffprobe '\(probe)'") }
        return ["gst-discoverer": clock[0] * 3600 + clock[1] * 60 + clock[2], "mediainfo": milliseconds / 1000, "ffprobe": seconds]
    }

    /// Where the file's last packet ends (pts + duration, of any stream), in seconds: its
    /// real length, read from the packets rather than from the header.
    public static func packetEnd(_ path: String) throws -> Double {
        let packets = try Tool.run("ffprobe", ["-v", "error", "-show_entries", "packet=pts_time,duration_time", "-of", "csv=p=0", path]).stdout
        let ends = packets.split(separator: "\n").compactMap { line -> Double? in
            let fields = line.split(separator: ",").compactMap { Double($0) }
            return fields.count == 2 ? fields[0] + fields[1] : nil
        }
        guard let end = ends.max() else { throw Unreadable(description: "\(path): ffprobe read no packets") }
        return end
    }

    /// Bytes of every packet of one stream (`v` or `a`), as ffprobe reads them.
    public static func packetBytes(_ path: String, _ stream: String) throws -> Double {
        let sizes = try Tool.run("ffprobe", ["-v", "error", "-select_streams", stream, "-show_entries", "packet=size", "-of", "csv=p=0", path]).stdout
        return sizes.split(separator: "\n").compactMap { Double($0) }.reduce(0, +)
    }

    /// maxBitrate and avgBitrate of every `btrt` box in the first 4 KiB (video first), or
    /// of an `esds` (an .m4a's sound has no `btrt`).
    public static func headerBitrates(_ path: String, box: String) throws -> [(max: UInt64, average: UInt64)] {
        let header = Array(try Data(contentsOf: URL(fileURLWithPath: path)).prefix(4096))[...]
        var found: [(UInt64, UInt64)] = []
        var at = 4
        while at + 4 <= header.count {
            defer { at += 1 }
            guard header[at..<(at + 4)].elementsEqual(box.utf8) else { continue }
            // btrt: bufferSizeDB, maxBitrate, avgBitrate. esds (as libavformat writes it): version
            // and flags, ES_Descriptor (tag, 4 length bytes, ES_ID, flags), DecoderConfigDescriptor
            // (tag, 4 length bytes, object type, stream type, 3 bytes of buffer size).
            let fields = box == "btrt" ? at + 8 : at + 4 + 4 + 5 + 3 + 5 + 2 + 3
            guard fields + 8 <= header.count else { continue }
            found.append((MP4HeaderLength.number(header, at: fields, width: 4), MP4HeaderLength.number(header, at: fields + 4, width: 4)))
        }
        return found
    }
}
