/// What `[upload] kinds` chooses among: the three trees of the library, and the event
/// clips with their stills (files with a label, `HHMMSS-motion.mp4`, wherever they are).
///
/// A file is of exactly one kind: a labelled file is `events` only, so `kinds = ["events"]`
/// copies the clips and their stills and no continuous footage.
public enum UploadKind: String, CaseIterable, Sendable, Hashable {
    case video, photo, audio, events

    /// The kind of a library file: `events` when its name carries a label, else its tree.
    public init(_ file: LibraryFilePath) {
        if LibraryLayout.eventLabel(ofFileName: file.name) != nil {
            self = .events
        } else {
            switch file.kind {
            case .video, .screen: self = .video   // a screen recording is video to whoever receives it
            case .photo: self = .photo
            case .audio: self = .audio
            }
        }
    }
}

/// A finished file in the library, `<kind>/YYYYMMDD/<name>` below the media root: the
/// only thing the upload queue holds. Never a temp file (`.incoming`, `.part`), a hidden
/// file (`.index`), a file outside a date folder, or a name with another extension.
public struct LibraryFilePath: Hashable, Comparable, Sendable, CustomStringConvertible {
    public let kind: MediaKind
    public let date: CalendarDate
    public let name: String

    /// Longest file name accepted (the library's own are under 30 bytes).
    static let maximumNameBytes = 128

    /// Parses `video/20261122/101455.mp4`; nil for anything else.
    public init?(relative text: some StringProtocol) {
        let parts = text.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 3, let kind = MediaKind(rawValue: String(parts[0])),
              let date = CalendarDate(folderName: parts[1]) else { return nil }
        let name = String(parts[2])
        let bytes = Array(name.utf8)
        guard (1...Self.maximumNameBytes).contains(bytes.count), bytes[0] != UInt8(ascii: "."),
              name.hasSuffix("." + kind.fileExtension), !name.hasSuffix(LibraryLayout.partSuffix),
              bytes.allSatisfy({ $0 > 0x20 && $0 < 0x7f && $0 != UInt8(ascii: "/") && $0 != UInt8(ascii: "\\") }) else { return nil }
        (self.kind, self.date, self.name) = (kind, date, name)
    }

    /// The library file at `path`, an absolute path below `root`; nil for anything else
    /// (a temp file in `.incoming`, a file of another tree, a path with `..`).
    public init?(absolute path: String, root: String) {
        let layout = LibraryLayout(root: root)
        let prefix = layout.root.hasSuffix("/") ? layout.root : layout.root + "/"
        guard path.hasPrefix(prefix) else { return nil }
        self.init(relative: path.dropFirst(prefix.count))
    }

    /// `video/20261122/101455.mp4`.
    public var relativePath: String { kind.rawValue + "/" + date.folderName + "/" + name }

    /// The file's absolute path in `layout`.
    public func path(in layout: LibraryLayout) -> String { layout.kindDirectory(kind) + "/" + date.folderName + "/" + name }

    /// Which `[upload] kinds` entry covers it.
    public var uploadKind: UploadKind { UploadKind(self) }

    public var description: String { relativePath }

    public static func < (a: Self, b: Self) -> Bool { a.relativePath < b.relativePath }
}
