import Foundation
import Logging

/// Log lines on stderr as swift-log's stream handler writes them, but with milliseconds:
/// latencies (a button to the first frame in the file, a stop to the file in the
/// library) are measured from these timestamps.
struct LogLineHandler: LogHandler {
    let label: String
    var logLevel: Logger.Level = .info
    var metadata: Logger.Metadata = [:]
    var metadataProvider: Logger.MetadataProvider?

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    // swiftlint:disable:next function_parameter_count
    func log(level: Logger.Level, message: Logger.Message, metadata explicit: Logger.Metadata?, source: String,
             file: String, function: String, line: UInt) {
        var merged = metadata
        if let provided = metadataProvider?.get() { merged.merge(provided) { _, new in new } }
        if let explicit { merged.merge(explicit) { _, new in new } }
        let details = merged.isEmpty ? "" : " " + merged.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
        let text = "\(Self.timestamp()) \(level) \(label):\(details) [\(source)] \(message)\n"
        FileHandle.standardError.write(Data(text.utf8))
    }

    /// "2026-11-23T21:37:47.123+0000", local time.
    static func timestamp() -> String {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        var seconds = now.tv_sec
        var parts = tm()
        localtime_r(&seconds, &parts)
        var buffer = [CChar](repeating: 0, count: 64)
        let written = strftime(&buffer, buffer.count, "%Y-%m-%dT%H:%M:%S", &parts)
        var zone = [CChar](repeating: 0, count: 16)
        _ = strftime(&zone, zone.count, "%z", &parts)
        let base = String(decoding: buffer.prefix(written).map { UInt8(bitPattern: $0) }, as: UTF8.self)
        let offset = String(cString: zone)
        let milliseconds = now.tv_nsec / 1_000_000
        return base + "." + (milliseconds < 10 ? "00" : milliseconds < 100 ? "0" : "") + String(milliseconds) + offset
    }
}
