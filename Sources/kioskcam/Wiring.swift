import Foundation
import Glibc
import KioskCore
import KioskRecording
import Logging

/// Collects what the recorder reports, for the foreground commands' main loop.
final class SessionLog: @unchecked Sendable {
    private let lock = Lock()
    private var files: [String] = []
    private var failures: [String] = []
    private var endedSources: [(String, SourceEnd)] = []

    func record(_ event: RecorderEvent) {
        lock.withLock {
            switch event {
            case .fileFinished(let path, _, _): files.append(path)
            case .failed(let error): failures.append(error.description)
            case .sourceEnded(let source, let end): endedSources.append((source, end))
            case .stateChanged, .snapshotSaved: break
            }
        }
    }

    var finishedFiles: [String] { lock.withLock { files } }
    var failureMessages: [String] { lock.withLock { failures } }
    /// How `source` ended, if it ran out (file) or broke.
    func end(of source: String) -> SourceEnd? {
        lock.withLock { endedSources.first { $0.0 == source && $0.1 != .stopped }?.1 }
    }
}

/// SIGINT/SIGTERM as a flag the main loop polls, so Ctrl-C finishes the file.
final class StopSignal: @unchecked Sendable {
    private let lock = Lock()
    private var raised: Int32?
    private var sources: [DispatchSourceSignal] = []

    init() {
        for number in [SIGINT, SIGTERM] {
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler { [weak self] in self?.lock.withLock { self?.raised = number } }
            source.resume()
            sources.append(source)
        }
    }

    var signalName: String? {
        lock.withLock { raised.map { $0 == SIGINT ? "SIGINT" : "SIGTERM" } }
    }
}
