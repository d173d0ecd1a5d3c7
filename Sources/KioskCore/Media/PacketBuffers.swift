/// What the pure packet buffers need to know about an encoded packet.
public struct PacketInfo: Sendable, Equatable {
    public enum Media: Sendable, Equatable { case video, audio }
    public var media: Media
    public var time: MonotonicInstant
    public var isKeyframe: Bool
    public var byteCount: Int

    public init(media: Media, time: MonotonicInstant, isKeyframe: Bool, byteCount: Int) {
        self.media = media
        self.time = time
        self.isKeyframe = isKeyframe
        self.byteCount = byteCount
    }

    /// A GOP starts at a video keyframe.
    public var startsGOP: Bool { media == .video && isKeyframe }
}

/// A queue of encoded packets for one output, bounded in bytes, that drops **whole GOPs**
/// when its output falls behind (a slow disk, a slow network): dropping single packets
/// would leave undecodable frames until the next keyframe; dropping from the oldest GOP
/// on keeps what remains decodable. Sound in the dropped span goes with it. Counts what
/// it drops. Pure: the graph's threads wrap it in a lock.
public struct GOPQueue<Payload> {
    private var items: [(info: PacketInfo, payload: Payload)] = []
    private var head = 0
    public private(set) var bytes = 0
    public let byteLimit: Int
    public private(set) var droppedGOPs = 0
    public private(set) var droppedPackets = 0
    /// After a drop, video is skipped until the next keyframe (the output must not get
    /// frames that refer to dropped ones).
    private var waitingForKeyframe = false

    public init(byteLimit: Int) { self.byteLimit = max(1, byteLimit) }

    public var count: Int { items.count - head }
    public var isEmpty: Bool { count == 0 }

    /// Whether `info` fits without dropping.
    public func hasRoom(for info: PacketInfo) -> Bool { bytes + info.byteCount <= byteLimit || isEmpty }

    /// Appends; when over the limit, drops the oldest GOP (or GOPs) first.
    /// - Returns: How many packets were dropped to make room.
    @discardableResult
    public mutating func append(_ info: PacketInfo, _ payload: Payload) -> Int {
        if waitingForKeyframe, info.media == .video {
            guard info.isKeyframe else {
                droppedPackets += 1
                return 1
            }
            waitingForKeyframe = false
        }
        var dropped = 0
        while bytes + info.byteCount > byteLimit, !isEmpty {
            dropped += dropOldestGOP()
        }
        if waitingForKeyframe, info.media == .video {
            // The drop took this frame's GOP: it cannot be decoded without it.
            guard info.isKeyframe else {
                droppedPackets += 1
                return dropped + 1
            }
            waitingForKeyframe = false
        }
        items.append((info, payload))
        bytes += info.byteCount
        return dropped
    }

    /// The oldest packet's facts, without taking it.
    public var firstInfo: PacketInfo? { head < items.count ? items[head].info : nil }

    /// Takes the oldest packet.
    public mutating func popFirst() -> (info: PacketInfo, payload: Payload)? {
        guard head < items.count else { return nil }
        let item = items[head]
        head += 1
        bytes -= item.info.byteCount
        compact()
        return item
    }

    /// Drops everything up to (not including) the second GOP start; if the queue holds no
    /// later keyframe, everything goes and video waits for the next keyframe.
    private mutating func dropOldestGOP() -> Int {
        let firstStart = head
        var end = items.count
        for index in (firstStart + 1)..<max(items.count, firstStart + 1) where items[index].info.startsGOP {
            end = index
            break
        }
        if end == items.count { waitingForKeyframe = true }
        let removed = end - firstStart
        for index in firstStart..<end { bytes -= items[index].info.byteCount }
        head = end
        droppedGOPs += 1
        droppedPackets += removed
        compact()
        return removed
    }

    private mutating func compact() {
        if head > 64, head * 2 > items.count {
            items.removeFirst(head)
            head = 0
        }
    }

    public mutating func removeAll() {
        items.removeAll()
        head = 0
        bytes = 0
    }
}

/// The pre-event buffer: the last seconds of encoded sound and video, bounded in bytes,
/// always starting at a video keyframe, so that a recording can begin in the past.
/// Pure; the graph wraps it in a lock.
public struct PacketRing<Payload> {
    private var items: [(info: PacketInfo, payload: Payload)] = []
    private var head = 0
    /// The newest time appended. The encoder's sound arrives stamped up to a chunk before
    /// the picture appended just ahead of it, so the last item is not always the newest.
    private var newest: MonotonicInstant?
    public private(set) var bytes = 0
    public let byteLimit: Int
    /// Seconds kept at least (while the byte budget allows).
    public let seconds: Double

    public init(seconds: Double, byteLimit: Int) {
        self.seconds = max(0, seconds)
        self.byteLimit = max(1, byteLimit)
    }

    public var count: Int { items.count - head }
    /// The time span held, from the first packet to the newest. Once the ring has dropped
    /// a GOP it is at least `seconds` (budget allowing); measured to the last item, it
    /// could read less whenever a sound packet came last.
    public var heldSeconds: Double {
        guard head < items.count, let newest else { return 0 }
        return newest.seconds(since: items[head].info.time)
    }

    /// Appends a packet. Before the first keyframe nothing is kept (nothing could start
    /// there); then whole GOPs are dropped from the front while the ring is over its
    /// byte budget or the second GOP already covers `seconds`.
    public mutating func append(_ info: PacketInfo, _ payload: Payload) {
        if count == 0 && !info.startsGOP { return }
        items.append((info, payload))
        newest = max(newest ?? info.time, info.time)
        bytes += info.byteCount
        while let second = secondGOPStart() {
            let overBudget = bytes > byteLimit
            let secondCoversSpan = info.time.seconds(since: items[second].info.time) >= seconds
            guard overBudget || secondCoversSpan else { break }
            for index in head..<second { bytes -= items[index].info.byteCount }
            head = second
        }
        if head > 256, head * 2 > items.count {
            items.removeFirst(head)
            head = 0
        }
    }

    private func secondGOPStart() -> Int? {
        guard head + 1 < items.count else { return nil }
        for index in (head + 1)..<items.count where items[index].info.startsGOP { return index }
        return nil
    }

    /// The packets from the last keyframe at or before `time` (or the oldest keyframe
    /// held, if none is that old) to now, sound included from that keyframe's time.
    public func packets(from time: MonotonicInstant) -> [(info: PacketInfo, payload: Payload)] {
        guard head < items.count else { return [] }
        var start = head
        for index in head..<items.count where items[index].info.startsGOP && items[index].info.time <= time {
            start = index
        }
        let keyframeTime = items[start].info.time
        return items[start...].filter { $0.info.media == .video || $0.info.time >= keyframeTime }
    }

    public mutating func removeAll() {
        items.removeAll()
        head = 0
        bytes = 0
        newest = nil
    }
}
