import Foundation
import KioskCore

/// Finds touch screens among `/dev/input/event*` by what they can do: direct input
/// (INPUT_PROP_DIRECT) with absolute position axes. Everything else is listed with
/// the reason it was passed over, so a person wiring a board can see why.
public enum TouchscreenDiscovery {
    /// One input device looked at.
    public struct Candidate: Sendable, Equatable {
        public var path: String
        public var capabilities: InputDeviceCapabilities
        public var verdict: TouchscreenVerdict

        /// "multi-touch B, 10 slots, direct input (INPUT_PROP_DIRECT), X 0…799, Y 0…479" or the rejection.
        public var explanation: String { verdict.explanation(capabilities) }
    }

    /// What `scan` found.
    public struct Report: Sendable {
        /// Touch screens, best first.
        public var touchscreens: [Candidate]
        /// Input devices that are not touch screens, with the reason.
        public var rejected: [Candidate]
        /// Nodes that could not be opened, with the error (e.g. permission denied).
        public var failures: [InputError]

        /// The best touch screen, if any.
        public var best: Candidate? { touchscreens.first }
    }

    /// Opens every event node in `directory` just long enough to read its capabilities.
    /// - Parameter skipping: Nodes not to open (those already in use by the caller).
    public static func scan(directory: String = "/dev/input", skipping: Set<String> = []) -> Report {
        var report = Report(touchscreens: [], rejected: [], failures: [])
        for path in eventNodes(in: directory) where !skipping.contains(path) {
            switch judge(path: path) {
            case .success(let candidate):
                if candidate.verdict.score != nil { report.touchscreens.append(candidate) } else { report.rejected.append(candidate) }
            case .failure(let error):
                report.failures.append(error)
            }
        }
        // Stable: the higher score first, then the lower event number.
        report.touchscreens = report.touchscreens.enumerated().sorted {
            ($0.element.verdict.score ?? 0, -$0.offset) > ($1.element.verdict.score ?? 0, -$1.offset)
        }.map(\.element)
        return report
    }

    /// Reads one node's capabilities and verdict.
    public static func judge(path: String) -> Result<Candidate, InputError> {
        do {
            let device = try EvdevDevice(path: path)
            defer { device.close() }
            return .success(Candidate(path: path, capabilities: device.capabilities, verdict: TouchscreenVerdict(device.capabilities)))
        } catch {
            return .failure(error)
        }
    }

    /// `/dev/input/event0`, `event1`, …, `event10` — in numeric order.
    public static func eventNodes(in directory: String) -> [String] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
        return names.compactMap { name -> (Int, String)? in
            guard name.hasPrefix("event"), let number = Int(name.dropFirst(5)) else { return nil }
            return (number, directory + "/" + name)
        }.sorted { $0.0 < $1.0 }.map(\.1)
    }
}
