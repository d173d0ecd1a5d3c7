/// The disk guard: keeps a free-space floor on the media filesystem by
/// deleting days, oldest first — the continuous footage of every older day before any
/// event clip — and says when a recording must not start.
/// Pure: the caller measures free space and day sizes and carries out the plan.
///
/// Two thresholds:
/// - the **floor**: below it, old days are deleted; if that is not enough, no new
///   recording starts (`DiskGuardPlan.canRecord` is false, with a message).
/// - the **hard floor**: half the floor, but at least 256 MiB (never more than the
///   floor itself). A recording in progress keeps going below the floor (the caller
///   purges old days meanwhile); when free space falls below the hard floor the
///   recorder closes its segment cleanly, so the file stays playable and the disk
///   never fills. 256 MiB is over three minutes at 9.3 Mbit/s, time enough to
///   notice and close even if the check runs only every few seconds.
public struct DiskGuardPolicy: Equatable, Sendable {
    /// The floor when neither `floorBytes` nor `floorPercent` is configured: 1 GiB.
    public static let defaultFloorBytes: Int64 = 1 << 30
    /// The hard floor never goes below this, unless the floor itself is lower: 256 MiB.
    public static let minimumHardFloorBytes: Int64 = 256 << 20
    /// The floor always leaves room for this long at the current bitrate: one hour.
    public static let headroomSeconds: Int64 = 3600

    /// A fixed floor in bytes; nil when not configured.
    public var floorBytes: Int64?
    /// A floor as a percentage (0…100) of the filesystem's size; nil when not configured.
    public var floorPercent: Double?

    public init(floorBytes: Int64? = nil, floorPercent: Double? = nil) {
        self.floorBytes = floorBytes
        self.floorPercent = floorPercent
    }

    /// The free-space floor: the largest of the configured bytes, the configured
    /// percentage of `totalBytes`, 1 GiB when neither is configured, and one hour at
    /// `currentBitrate`.
    ///
    /// The two automatic terms (the 1 GiB default and the hour of recording) are capped
    /// at half the filesystem, so the defaults cannot forbid recording on a small card;
    /// configured values are honoured as they are.
    /// - Parameters:
    ///   - totalBytes: The filesystem's size (0 if unknown: no percentage, no cap).
    ///   - currentBitrate: Bits per second of everything being recorded (video + sound), if known.
    public func floor(totalBytes: Int64, currentBitrate: Int?) -> Int64 {
        var configured: Int64 = 0
        var isConfigured = false
        if let bytes = floorBytes {
            configured = max(configured, bytes)
            isConfigured = true
        }
        if let percent = floorPercent, percent.isFinite {
            isConfigured = true
            if totalBytes > 0 {
                let share = Double(totalBytes) * min(max(percent, 0), 100) / 100
                configured = max(configured, Int64(share.rounded(.up)))
            }
        }
        var automatic = isConfigured ? 0 : Self.defaultFloorBytes
        if let bitrate = currentBitrate, bitrate > 0 {
            let (bits, overflow) = Int64(bitrate).multipliedReportingOverflow(by: Self.headroomSeconds)
            automatic = max(automatic, overflow ? Int64.max : (bits + 7) / 8)
        }
        if totalBytes > 0 { automatic = min(automatic, totalBytes / 2) }
        return max(configured, automatic)
    }

    /// The hard floor for a recording in progress: half the floor, at least 256 MiB,
    /// at most the floor. Below it the recorder closes the segment cleanly.
    public func hardFloor(totalBytes: Int64, currentBitrate: Int?) -> Int64 {
        let floor = floor(totalBytes: totalBytes, currentBitrate: currentBitrate)
        return min(floor, max(floor / 2, Self.minimumHardFloorBytes))
    }

    /// Whether a recording in progress must close its segment now.
    public func mustStopRecording(freeBytes: Int64, totalBytes: Int64, currentBitrate: Int?) -> Bool {
        freeBytes < hardFloor(totalBytes: totalBytes, currentBitrate: currentBitrate)
    }

    /// Which days to delete to get back over the floor.
    ///
    /// First the continuous footage of each day, oldest first; then, only if that is
    /// not enough, the event clips of each day, oldest first (users keep events longer
    /// and want them to survive a full disk). It stops as soon as the projected free
    /// space reaches the floor. Never deleted: today, dates in `protected` (the
    /// recording in progress), and dates after today (a wrong clock; retention reports them).
    /// - Parameters:
    ///   - freeBytes: Free space available to kioskcam now (`f_bavail × f_frsize`).
    ///   - totalBytes: The filesystem's size.
    ///   - bitrate: Bits per second of the recording about to start or in progress, if known.
    ///   - days: The space each date takes, across video, photo and audio; a date
    ///     listed more than once is added up.
    ///   - eventBytes: Of that, the space each date's event clips take (none: a date
    ///     without clips); more than the day's whole is read as the whole.
    ///   - today: Today's local date.
    ///   - protected: Dates never to delete.
    public func plan(freeBytes: Int64, totalBytes: Int64, bitrate: Int?,
                     days: [(date: CalendarDate, bytes: Int64)], eventBytes: [CalendarDate: Int64] = [:],
                     today: CalendarDate, protected: Set<CalendarDate> = []) -> DiskGuardPlan {
        let floor = floor(totalBytes: totalBytes, currentBitrate: bitrate)
        let hardFloor = hardFloor(totalBytes: totalBytes, currentBitrate: bitrate)
        let free = max(0, freeBytes)
        var plan = DiskGuardPlan(floorBytes: floor, hardFloorBytes: hardFloor, freeBytes: free,
                                 projectedFreeBytes: free, deletions: [], canRecord: true, message: nil)
        guard free < floor else { return plan }

        var bytesByDate: [CalendarDate: Int64] = [:]
        for day in days { bytesByDate[day.date, default: 0] = Self.add(bytesByDate[day.date] ?? 0, max(0, day.bytes)) }
        let dates = bytesByDate.keys.sorted()
        let left = dates.filter { $0 >= today || protected.contains($0) }
        let deletable = dates.filter { $0 < today && !protected.contains($0) }
        func clips(_ date: CalendarDate) -> Int64 { min(max(0, eventBytes[date] ?? 0), bytesByDate[date] ?? 0) }
        // Continuous footage first: a day without clips goes whole.
        for date in deletable where plan.projectedFreeBytes < floor {
            let footage = (bytesByDate[date] ?? 0) - clips(date)
            guard footage > 0 || clips(date) == 0 else { continue }
            plan.deletions.append(.init(date: date, bytes: footage, share: clips(date) == 0 ? .all : .continuous))
            plan.projectedFreeBytes = Self.add(plan.projectedFreeBytes, footage)
        }
        // Then the clips, oldest first.
        for date in deletable where plan.projectedFreeBytes < floor && clips(date) > 0 {
            let footageGone = plan.deletions.contains { $0.date == date }
            plan.deletions.append(.init(date: date, bytes: clips(date), share: footageGone ? .events : .all))
            plan.projectedFreeBytes = Self.add(plan.projectedFreeBytes, clips(date))
        }
        guard plan.projectedFreeBytes < floor else { return plan }

        plan.canRecord = false
        let freed = plan.projectedFreeBytes - free
        let dayCount = Set(plan.deletions.map(\.date)).count
        let what = plan.deletions.isEmpty
            ? "nothing can be deleted"
            : "deleting every older day (\(dayCount) \(dayCount == 1 ? "day" : "days"), "
              + "\(ByteCountText.text(freed))) is not enough"
        plan.message = "free space \(ByteCountText.text(free)) is below the floor \(ByteCountText.text(floor)) and "
            + what + " (" + Self.describeLeft(left, today: today, protected: protected) + "): "
            + "free space or lower storage.min_free_* settings"
        return plan
    }

    /// "only today's recordings are left", "only today's recordings, the day of the
    /// recording in progress and 2 days dated in the future are left", …
    private static func describeLeft(_ left: [CalendarDate], today: CalendarDate, protected: Set<CalendarDate>) -> String {
        var parts: [String] = []
        if left.contains(today) { parts.append("today's recordings") }
        let inProgress = left.filter { $0 != today && protected.contains($0) && $0 < today }.count
        if inProgress == 1 { parts.append("the day of the recording in progress") }
        if inProgress > 1 { parts.append("\(inProgress) protected days") }
        let future = left.filter { $0 > today }.count
        if future > 0 { parts.append("\(future) \(future == 1 ? "day" : "days") dated in the future (clock wrong?)") }
        guard let last = parts.popLast() else {
            return "the library holds nothing else to delete; something else is filling the disk"
        }
        return "only " + (parts.isEmpty ? last : parts.joined(separator: ", ") + " and " + last) + " are left"
    }

    private static func add(_ a: Int64, _ b: Int64) -> Int64 {
        let (sum, overflow) = a.addingReportingOverflow(b)
        return overflow ? Int64.max : sum
    }
}

/// What the disk guard decided.
public struct DiskGuardPlan: Equatable, Sendable {
    public struct Deletion: Hashable, Sendable {
        public var date: CalendarDate
        /// The space the deletion frees across video, photo and audio.
        public var bytes: Int64
        /// The whole day, its continuous footage, or (when the footage went first) its event clips.
        public var share: LibraryShare
        /// Always `.space`: kept so guard and retention deletions read alike.
        public var reason: DeletionReason { .space }

        public init(date: CalendarDate, bytes: Int64, share: LibraryShare = .all) {
            self.date = date
            self.bytes = bytes
            self.share = share
        }
    }

    /// The floor in effect.
    public var floorBytes: Int64
    /// Below this a recording in progress closes its segment.
    public var hardFloorBytes: Int64
    /// Free space before any deletion.
    public var freeBytes: Int64
    /// Free space once `deletions` are done.
    public var projectedFreeBytes: Int64
    /// Days (or their footage, then their clips) to delete, in order.
    public var deletions: [Deletion]
    /// Whether a recording may start once `deletions` are done.
    public var canRecord: Bool
    /// Why a recording may not start, for the person at the device; nil when it may.
    public var message: String?
}

/// Byte counts for people, one decimal: "0.8 GiB", "12.5 MiB", "300.0 KiB", "12 bytes".
public enum ByteCountText {
    public static func text(_ bytes: Int64) -> String {
        // GiB from 0.1 GiB, so a floor reads "0.8 GiB"; smaller units from one whole unit.
        let units: [(name: String, size: UInt64, from: UInt64)] = [("GiB", 1 << 30, (1 << 30) / 10),
                                                                  ("MiB", 1 << 20, 1 << 20), ("KiB", 1 << 10, 1 << 10)]
        let sign = bytes < 0 ? "-" : ""
        for (name, size, from) in units where bytes.magnitude >= from {
            let tenths = UInt64((Double(bytes.magnitude) / Double(size) * 10).rounded())
            return "\(sign)\(tenths / 10).\(tenths % 10) \(name)"
        }
        return "\(bytes) bytes"
    }
}
