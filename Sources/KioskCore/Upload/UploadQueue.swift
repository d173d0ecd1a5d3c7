/// The upload queue: library files waiting for their offsite copy, oldest first, each
/// with its failed attempts and the time before which it is not tried again.
///
/// Kept in `<state_directory>/upload-queue` (replaced atomically on every change) so it
/// survives restarts and power cuts. One line per file:
/// ```
/// # kioskcam upload queue 1
/// ATTEMPTS<TAB>NOT_BEFORE<TAB>BYTES<TAB>video/20261122/101455.mp4
/// ```
/// `NOT_BEFORE` is seconds since 1970 (UTC). `parse` accepts any bytes: a damaged line is
/// counted and skipped, never a trap.
public struct UploadQueue: Sendable, Equatable {
    public struct Entry: Sendable, Equatable {
        public var file: LibraryFilePath
        /// The file's size when it was queued.
        public var bytes: Int64
        /// Failed attempts so far.
        public var attempts: Int
        /// Not tried before this time (seconds since 1970); 0 = at once.
        public var notBefore: Int64

        public init(file: LibraryFilePath, bytes: Int64, attempts: Int = 0, notBefore: Int64 = 0) {
            self.file = file
            self.bytes = bytes
            self.attempts = attempts
            self.notBefore = notBefore
        }
    }

    public static let fileName = "upload-queue"
    static let header = "# kioskcam upload queue 1"
    /// Lines longer than this are damaged (a real one is under 200 bytes).
    static let maximumLineBytes = 512
    /// Most files held; a queue this long means the uploads have been failing for weeks,
    /// and retention is deleting the oldest meanwhile (the disk guard's rule).
    public static let maximumEntries = 200_000
    static let maximumAttempts = 1_000_000
    static let maximumTime: Int64 = 1 << 40
    static let maximumBytes: Int64 = 1 << 50

    /// Oldest first.
    public private(set) var entries: [Entry] = []

    public init(entries: [Entry] = []) {
        for entry in entries { add(entry) }
    }

    public var count: Int { entries.count }
    public var isEmpty: Bool { entries.isEmpty }
    /// The bytes waiting, as queued.
    public var bytes: Int64 { entries.reduce(0) { Self.add($0, $1.bytes) } }
    /// The relative paths waiting: what retention must not delete.
    public var relativePaths: Set<String> { Set(entries.map(\.file.relativePath)) }

    public func contains(_ file: LibraryFilePath) -> Bool { entries.contains { $0.file == file } }

    /// Adds a file at the end, or updates the entry already there (its place kept).
    /// Returns false when the queue is full and the file was not added.
    @discardableResult
    public mutating func add(_ entry: Entry) -> Bool {
        if let index = entries.firstIndex(where: { $0.file == entry.file }) {
            entries[index] = entry
            return true
        }
        guard entries.count < Self.maximumEntries else { return false }
        entries.append(entry)
        return true
    }

    public mutating func remove(_ file: LibraryFilePath) {
        entries.removeAll { $0.file == file }
    }

    /// The first entry due at `now`: the oldest file whose wait is over.
    public func next(now: Int64) -> Entry? { entries.first { $0.notBefore <= now } }

    /// When the next entry is due (nil: the queue is empty).
    public var nextDue: Int64? { entries.map(\.notBefore).min() }

    /// Records a failed attempt: the entry waits as `backoff` says.
    /// - Parameter jitter: 0…1, spreads the retries of many boards (`Double.random(in: 0...1)`).
    public mutating func failed(_ file: LibraryFilePath, now: Int64, backoff: UploadBackoff, jitter: Double) {
        guard let index = entries.firstIndex(where: { $0.file == file }) else { return }
        let attempts = min(entries[index].attempts + 1, Self.maximumAttempts)
        entries[index].attempts = attempts
        entries[index].notBefore = backoff.notBefore(now: now, failures: attempts, jitter: jitter)
    }

    /// Every entry due at once (`kioskcam upload now`, the network came back).
    public mutating func makeAllDue() {
        for index in entries.indices { entries[index].notBefore = 0 }
    }

    /// Waits longer than `backoff` could have asked for come from a clock that was set
    /// back: they are cut to the longest wait from `now`.
    public mutating func clampWaits(now: Int64, backoff: UploadBackoff) {
        let latest = now + Int64(backoff.maximumSeconds.rounded(.up))
        for index in entries.indices where entries[index].notBefore > latest { entries[index].notBefore = latest }
    }

    /// The file's text.
    public func render() -> String {
        var text = Self.header + "\n"
        for entry in entries {
            text += "\(entry.attempts)\t\(entry.notBefore)\t\(entry.bytes)\t\(entry.file.relativePath)\n"
        }
        return text
    }

    /// Reads a queue file's bytes, whatever they hold.
    /// - Returns: The queue, and how many non-empty lines were not valid entries (the
    ///   header and `#` comments are not counted).
    public static func parse(_ bytes: some Collection<UInt8>) -> (queue: UploadQueue, damagedLines: Int) {
        var queue = UploadQueue()
        var damaged = 0
        for rawLine in bytes.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: true) {
            guard rawLine.first != UInt8(ascii: "#") else { continue }
            guard let entry = entry(rawLine), queue.add(entry) else {
                damaged += 1
                continue
            }
        }
        return (queue, damaged)
    }

    private static func entry(_ line: some Collection<UInt8>) -> Entry? {
        guard line.count <= maximumLineBytes else { return nil }
        let fields = line.split(separator: UInt8(ascii: "\t"), omittingEmptySubsequences: false)
        guard fields.count == 4, let attempts = number(fields[0]), attempts <= Int64(maximumAttempts),
              let notBefore = number(fields[1]), notBefore <= maximumTime,
              let size = number(fields[2]), size <= maximumBytes,
              let file = LibraryFilePath(relative: String(decoding: fields[3], as: UTF8.self)) else { return nil }
        return Entry(file: file, bytes: size, attempts: Int(attempts), notBefore: notBefore)
    }

    /// 1…15 ASCII digits (no sign, no overflow possible).
    private static func number(_ field: some Collection<UInt8>) -> Int64? {
        guard (1...15).contains(field.count) else { return nil }
        var value: Int64 = 0
        for byte in field {
            guard (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) else { return nil }
            value = value * 10 + Int64(byte - UInt8(ascii: "0"))
        }
        return value
    }

    private static func add(_ a: Int64, _ b: Int64) -> Int64 {
        let (sum, overflow) = a.addingReportingOverflow(b)
        return overflow ? Int64.max : sum
    }
}

/// How long a file waits after failed uploads: doubling from `initialSeconds` up to
/// `maximumSeconds`, shortened by up to a fifth at random so a fleet that lost the
/// network together does not retry in step.
public struct UploadBackoff: Sendable, Equatable {
    public var initialSeconds: Double
    public var maximumSeconds: Double

    public init(initialSeconds: Double = 10, maximumSeconds: Double = 900) {
        self.initialSeconds = initialSeconds.isFinite ? max(0, initialSeconds) : 10
        self.maximumSeconds = maximumSeconds.isFinite ? max(self.initialSeconds, maximumSeconds) : 900
    }

    /// Seconds to wait after `failures` failed attempts in a row (0 for none).
    /// - Parameter jitter: 0…1 (clamped); 0 gives the full wait, 1 four fifths of it.
    public func delay(failures: Int, jitter: Double = 0) -> Double {
        guard failures > 0 else { return 0 }
        let doublings = min(failures - 1, 40)
        let full = min(initialSeconds * Double(1 << UInt64(doublings)), maximumSeconds)
        let spread = jitter.isFinite ? min(max(jitter, 0), 1) : 0
        return full * (1 - 0.2 * spread)
    }

    /// The time (seconds since 1970) before which the file is not tried again.
    public func notBefore(now: Int64, failures: Int, jitter: Double = 0) -> Int64 {
        let (sum, overflow) = now.addingReportingOverflow(Int64(delay(failures: failures, jitter: jitter).rounded(.up)))
        return overflow ? Int64.max : sum
    }
}

/// Retention and the disk guard against the upload queue: age never deletes a file
/// that is waiting for its offsite copy; only the disk guard may, when the disk would
/// otherwise fill, and then it says which files and how many bytes go un-uploaded.
public struct UploadHold: Sendable, Equatable {
    /// Relative paths (`video/20261122/101455.mp4`) waiting for upload.
    public var waiting: Set<String>

    public init(waiting: Set<String> = []) { self.waiting = waiting }

    public var isEmpty: Bool { waiting.isEmpty }

    /// Whether the file `name` in the date folder `kind/date` is waiting.
    public func isWaiting(kind: MediaKind, date: CalendarDate, name: String) -> Bool {
        waiting.contains(kind.rawValue + "/" + date.folderName + "/" + name)
    }

    /// What retention may take of `names` (a folder's files, or the share it planned):
    /// every name but those waiting, which are held.
    public func retentionSplit(kind: MediaKind, date: CalendarDate, names: [String]) -> (deletable: [String], held: [String]) {
        var deletable: [String] = [], held: [String] = []
        for name in names {
            if isWaiting(kind: kind, date: date, name: name) { held.append(name) } else { deletable.append(name) }
        }
        return (deletable, held)
    }

    /// Of the names the disk guard takes, those that go without their offsite copy.
    public func unuploaded(kind: MediaKind, date: CalendarDate, names: [String]) -> [String] {
        names.filter { isWaiting(kind: kind, date: date, name: $0) }
    }
}
