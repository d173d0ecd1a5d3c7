import Foundation
import KioskCore
import KioskRecording

/// Native HLS of the live view (`/api/live.m3u8`), for browsers without Media Source
/// Extensions. While anyone fetches the playlist it watches the live stream as one more
/// viewer (whatever the number of HLS players: they all read the same segments) and
/// gathers its fragments into `HLSWindow` segments; 30 s after the last playlist request
/// it leaves, so the encoder stops muxing for it.
final class LiveHLS: Sendable {
    private struct State {
        var window = HLSWindow()
        var viewer: LiveStream.Viewer?
        var lastRequest = Date.distantPast
    }

    private let stream: LiveStream
    private let state = Locked(State())
    /// Seconds without a playlist request before HLS stops watching.
    private let idleSeconds: Double = 30

    init(stream: LiveStream) { self.stream = stream }

    /// The playlist, joining the stream first if nobody watched through HLS; waits up to
    /// `seconds` for the first segment (a GOP). Nil: still none, or the stream is full.
    func playlist(prefix: String, waiting seconds: Double = 10) async -> String? {
        watch()
        let deadline = Date().addingTimeInterval(seconds)
        while true {
            if let text = state.withLock({ $0.window.playlist(prefix: prefix) }) { return text }
            guard Date() < deadline, state.withLock({ $0.viewer != nil }) else { return nil }
            try? await Task.sleep(nanoseconds: 100_000_000)
        }
    }

    var initSegment: [UInt8]? { state.withLock { $0.window.initSegment } }

    func segment(_ sequence: Int) -> [UInt8]? { state.withLock { $0.window.segment(sequence)?.bytes } }

    /// Whether HLS watches the stream now (for status).
    var watching: Bool { state.withLock { $0.viewer != nil } }

    private func watch() {
        let viewer = state.withLock { state -> LiveStream.Viewer? in
            state.lastRequest = Date()
            guard state.viewer == nil, let viewer = stream.join() else { return nil }
            // A new window continues the numbering, so a player never mistakes a new
            // segment for one it has already played.
            state.window = HLSWindow(firstSequence: state.window.upcomingSequence)
            state.viewer = viewer
            return viewer
        }
        guard let viewer else { return }
        Task.detached { [self] in
            for await chunk in viewer.chunks {
                viewer.consumed(chunk)
                let idle = state.withLock { state -> Bool in
                    switch chunk.kind {
                    case .initSegment: state.window.start(initSegment: chunk.bytes)
                    case .fragment(let keyframe): state.window.add(fragment: chunk.bytes, keyframe: keyframe, seconds: chunk.seconds)
                    }
                    return Date().timeIntervalSince(state.lastRequest) > idleSeconds
                }
                if idle { break }
            }
            stream.leave(viewer)
            state.withLock { state in
                if state.viewer === viewer { state.viewer = nil }
            }
        }
    }
}
