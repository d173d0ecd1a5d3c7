/// What `LibraryScanner.scan()` (KioskRecording) found under `<root>/{video,photo,audio}/`.
public struct LibraryScan: Equatable, Sendable {
    /// A regular file directly inside a date folder.
    public struct File: Hashable, Sendable {
        public var name: String
        /// Its size (`st_size`).
        public var bytes: Int64
        /// Its modification time, seconds since 1970 (`st_mtim`).
        public var modified: Int64
        /// The space it takes on disk (`st_blocks × 512`): what deleting it frees.
        public var diskBytes: Int64 = 0

        public init(name: String, bytes: Int64, modified: Int64, diskBytes: Int64 = 0) {
            self.name = name
            self.bytes = bytes
            self.modified = modified
            self.diskBytes = diskBytes
        }
    }

    /// A real directory (not a symlink) directly in a kind folder whose name is a valid
    /// `YYYYMMDD` — including dates after today; retention decides what they mean.
    public struct DateFolder: Equatable, Sendable {
        public var kind: MediaKind
        public var date: CalendarDate
        /// The regular files directly inside, sorted by name.
        public var files: [File]
        /// The size of every regular file inside, subfolders included (symlinks never followed).
        public var bytes: Int64
        /// The space on disk the folder's contents take (`st_blocks × 512`): what deleting it frees.
        public var diskBytes: Int64
        /// Subfolders, symlinks, devices, pipes and sockets directly inside.
        public var otherEntries: Int

        /// `video/20260131`, relative to the media root.
        public var relativePath: String { kind.rawValue + "/" + date.folderName }

        public init(kind: MediaKind, date: CalendarDate, files: [File], bytes: Int64, diskBytes: Int64, otherEntries: Int) {
            self.kind = kind
            self.date = date
            self.files = files
            self.bytes = bytes
            self.diskBytes = diskBytes
            self.otherEntries = otherEntries
        }
    }

    /// A part of the library that could not be scanned, or a kind folder that is not a
    /// real folder: left alone and reported.
    public struct Problem: Hashable, Sendable {
        /// The path relative to the media root, e.g. `video` or `audio/20260131`.
        public var relativePath: String
        public var reason: String

        public init(relativePath: String, reason: String) {
            self.relativePath = relativePath
            self.reason = reason
        }
    }

    /// Every name directly inside the kind folders.
    public var entries: [LibraryEntry] = []
    /// The date folders among them, by date then kind.
    public var dateFolders: [DateFolder] = []
    public var problems: [Problem] = []

    public init() {}

    /// The space each date takes across video, photo and audio (`diskBytes`), oldest first:
    /// the disk guard's input.
    public var days: [(date: CalendarDate, bytes: Int64)] {
        var byDate: [CalendarDate: Int64] = [:]
        for folder in dateFolders { byDate[folder.date, default: 0] += folder.diskBytes }
        return byDate.keys.sorted().map { ($0, byDate[$0] ?? 0) }
    }

    /// The date folders of one date, in kind order.
    public func folders(on date: CalendarDate) -> [DateFolder] { dateFolders.filter { $0.date == date } }
}
