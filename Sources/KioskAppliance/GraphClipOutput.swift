import KioskCore
import KioskRecording

/// Event clips out of the media graph's one encode: a recording output of its own
/// (so a clip and the continuous recording can be written at once, mode `both`) that
/// begins from the pre-event ring — the encoded packets of the last seconds, starting
/// at a keyframe — and goes on live. Nothing is encoded twice.
final class GraphClipOutput: EventClipOutput, Sendable {
    let output: RecordingOutput
    let ring: PreEventRing

    init(output: RecordingOutput, ring: PreEventRing) {
        self.output = output
        self.ring = ring
    }

    func startClip(preSeconds: Double, label: String) throws(RecorderError) -> Double {
        // What the ring holds now is where the clip can begin at the earliest.
        let held = ring.held.seconds
        try output.start(preEvent: (ring, preSeconds), label: label)
        return held.isFinite ? min(preSeconds, max(0, held)) : preSeconds
    }

    func endClip() -> [String] {
        do {
            try output.stop(.now)
        } catch {
            return []
        }
        // The clip's tail (one fragment) is written and moved within a second; the
        // events queue waits for it so the log's end line can name the file.
        _ = output.waitUntilIdle(timeout: 10)
        return output.status.finishedFiles
    }
}
