/// A library file named in a URL: `/media/{kind}/{YYYYMMDD}/{file}` (and `/thumbs/…`).
///
/// Parsed by the library's own layout, never joined blindly: the kind must be one of the
/// library's folders, the day a real `YYYYMMDD`, the name a recording's (digits first,
/// then `a-z 0-9 - .`, the kind's extension, no `..`, no hidden file). Percent signs,
/// backslashes and anything else are refused before any file is touched, so neither
/// `%2e%2e` nor a double encoding can name another folder.
public struct WebMediaPath: Equatable, Sendable {
    public var kind: MediaKind
    public var day: String
    public var name: String

    public init?(kind: String, day: String, name: String) {
        guard let kind = MediaKind(rawValue: kind), CalendarDate(folderName: day) != nil else { return nil }
        let bytes = Array(name.utf8)
        let allowed: (UInt8) -> Bool = {
            (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) || (UInt8(ascii: "a")...UInt8(ascii: "z")).contains($0)
                || $0 == UInt8(ascii: "-") || $0 == UInt8(ascii: ".")
        }
        guard (8...64).contains(bytes.count), bytes.allSatisfy(allowed), bytes.prefix(6).allSatisfy({ (48...57).contains($0) }),
              name.hasSuffix("." + kind.fileExtension), !name.contains("..") else { return nil }
        (self.kind, self.day, self.name) = (kind, day, name)
    }

    /// Parses `kind/YYYYMMDD/file` (what follows `/media/`).
    public init?(relative: String) {
        let parts = relative.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 3 else { return nil }
        self.init(kind: String(parts[0]), day: String(parts[1]), name: String(parts[2]))
    }

    /// `video/20261128/101455.mp4`, as `list` and `clip.export` name recordings.
    public var relative: String { "\(kind.rawValue)/\(day)/\(name)" }

    /// The file under `layout`'s root.
    public func path(in layout: LibraryLayout) -> String { layout.kindDirectory(kind) + "/" + day + "/" + name }

    /// The URL the pages use for the file, and for its thumbnail.
    public var mediaURL: String { "/media/" + relative }
    public var thumbnailURL: String { "/thumbs/" + relative }
}
