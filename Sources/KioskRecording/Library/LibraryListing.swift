import Glibc
import KioskCore
import KioskMedia

/// One recording in the library, as `kioskcam list` shows it.
public struct LibraryRecording: Sendable, Codable, Equatable {
    public var kind: MediaKind
    public var path: String
    /// "2026-11-22 01:45:00", local time, from the folder and file name.
    public var start: String
    public var seconds: Double?
    public var bytes: Int64
}

/// Lists what the library holds, day by day, fast: names and sizes from the folder,
/// durations from the day's index (a file missing from it is probed).
public struct LibraryListing: Sendable {
    public let layout: LibraryLayout

    public init(layout: LibraryLayout) { self.layout = layout }

    /// The date folders present, oldest first (`YYYYMMDD` names only).
    public func days() -> [String] {
        var names = Set<String>()
        for kind in MediaKind.allCases {
            for name in Self.entries(layout.kindDirectory(kind)) where CalendarDate(folderName: name) != nil {
                names.insert(name)
            }
        }
        return names.sorted()
    }

    /// Every recording of `day` (`YYYYMMDD`), in start order.
    /// - Parameter probeMissing: Read files missing from the index to learn their duration.
    public func recordings(on day: String, probeMissing: Bool = true) -> [LibraryRecording] {
        var found: [LibraryRecording] = []
        for kind in MediaKind.allCases {
            let directory = layout.kindDirectory(kind) + "/" + day
            var durations: [String: Double] = [:]
            if let text = Self.read(directory + "/" + LibraryIndex.fileName) { durations = LibraryIndex.parse(text) }
            for name in Self.entries(directory) where name.hasSuffix("." + kind.fileExtension) && !name.hasPrefix(".") {
                let path = directory + "/" + name
                var info = stat()
                guard lstat(path, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else { continue }
                var seconds = kind == .photo ? nil : durations[name]
                if seconds == nil, kind != .photo, probeMissing {
                    seconds = try? MediaSalvage.inspect(path).seconds
                }
                found.append(LibraryRecording(kind: kind, path: path, start: Self.startText(day: day, name: name),
                                              seconds: seconds, bytes: Int64(info.st_size)))
            }
        }
        return found.sorted { ($0.start, $0.path) < ($1.start, $1.path) }
    }

    private static func startText(day: String, name: String) -> String {
        let stem = name.prefix { $0 != "." && $0 != "-" }
        guard let time = LocalTimestamp(parsing: Substring(day + "-" + stem)) else { return day }
        return time.readable
    }

    static func entries(_ directory: String) -> [String] {
        (try? FileManagerNames.list(directory)) ?? []
    }

    static func read(_ path: String) -> String? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65_536)
        while true {
            let count = chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if count <= 0 { break }
            bytes += chunk[0..<count]
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
