import Foundation
import Glibc
import KioskCore
import KioskRecording
import Logging

/// Collects what the recorder reports, for the foreground commands' main loop.
public final class SessionLog: Sendable {
    public init() {}

    private struct Entries {
        var files: [String] = []
        var failures: [String] = []
        var endedSources: [(String, SourceEnd)] = []
    }
    private let entries = Locked(Entries())

    public func record(_ event: RecorderEvent) {
        entries.withLock { entries in
            switch event {
            case .fileFinished(let path, _, _): entries.files.append(path)
            case .failed(let error): entries.failures.append(error.description)
            case .sourceEnded(let source, let end): entries.endedSources.append((source, end))
            case .stateChanged, .snapshotSaved: break
            }
        }
    }

    public var finishedFiles: [String] { entries.withLock { $0.files } }
    public var failureMessages: [String] { entries.withLock { $0.failures } }
    /// How `source` ended, if it ran out (file) or broke.
    public func end(of source: String) -> SourceEnd? {
        entries.withLock { $0.endedSources.first { $0.0 == source && $0.1 != .stopped }?.1 }
    }
}

/// SIGINT/SIGTERM as a flag the main loop polls, so Ctrl-C finishes the file.
public final class StopSignal: Sendable {
    private let raised = Locked<Int32?>(nil)
    /// Kept so that the handlers stay installed while the flag lives.
    private let sources = Locked<[DispatchSourceSignal]>([])

    public init() {
        let raised = raised
        sources.withLock { sources in
            for number in [SIGINT, SIGTERM] {
                signal(number, SIG_IGN)
                let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
                source.setEventHandler { raised.withLock { $0 = number } }
                source.resume()
                sources.append(source)
            }
        }
    }

    public var signalName: String? {
        raised.withLock { $0.map { $0 == SIGINT ? "SIGINT" : "SIGTERM" } }
    }
}
