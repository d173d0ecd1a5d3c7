/// One live viewer's queue, by bytes: what goes in, what is dropped. A fragment that
/// would take the queue past its limit is dropped with the rest of its GOP (counted), and
/// the viewer goes on at the next keyframe — a GOP cut short would show garbage; a new
/// one decodes cleanly.
public struct LiveViewerBudget: Sendable, Equatable {
    public let byteLimit: Int
    public private(set) var queuedBytes = 0
    public private(set) var sentBytes: Int64 = 0
    public private(set) var droppedGOPs = 0
    /// True until the first keyframe, and after a drop until the next.
    public private(set) var waitingForKeyframe = true

    public init(byteLimit: Int) { self.byteLimit = byteLimit }

    /// Whether a fragment of `bytes` goes into the queue.
    public mutating func admit(bytes: Int, keyframe: Bool) -> Bool {
        if keyframe { waitingForKeyframe = false }
        guard !waitingForKeyframe else { return false }
        guard queuedBytes + bytes <= byteLimit else {
            waitingForKeyframe = true
            droppedGOPs += 1
            return false
        }
        queuedBytes += bytes
        sentBytes += Int64(bytes)
        return true
    }

    /// The consumer sent `bytes` on.
    public mutating func consumed(bytes: Int) { queuedBytes = max(0, queuedBytes - bytes) }
}
