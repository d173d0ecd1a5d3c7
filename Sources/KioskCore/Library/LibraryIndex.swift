/// The per-day index: one line per finished recording, `NAME<TAB>SECONDS`, kept in
/// each date folder as `.index`. It lets `kioskcam list` show durations for a day of
/// 1,440 one-minute files without opening every file. Files missing from it (copied
/// in by hand) are probed instead; a damaged line is ignored.
public enum LibraryIndex {
    public static let fileName = ".index"

    public static func line(name: String, seconds: Double) -> String {
        // Durations come from files (salvage reads them from damaged ones): clamp before
        // converting, so no value can trap.
        let clamped = seconds.isFinite ? min(max(0, seconds), 1e9) : 0
        let milliseconds = Int((clamped * 1000).rounded())
        return name + "\t" + String(milliseconds / 1000) + "." + pad3(milliseconds % 1000) + "\n"
    }

    /// Durations by file name; the last line for a name wins.
    public static func parse(_ text: String) -> [String: Double] {
        var durations: [String: Double] = [:]
        for line in text.split(separator: "\n") {
            let fields = line.split(separator: "\t")
            guard fields.count == 2, let seconds = Double(fields[1]), seconds >= 0, seconds.isFinite else { continue }
            durations[String(fields[0])] = seconds
        }
        return durations
    }

    private static func pad3(_ value: Int) -> String {
        value < 10 ? "00\(value)" : value < 100 ? "0\(value)" : String(value)
    }
}

extension LibraryIndex {
    /// The mark of a file whose offsite copy was checked: `NAME<TAB>uploaded<TAB>ETAG`.
    /// Three fields, so `parse` (exactly two) passes over it and older readers keep
    /// the file's duration from its first line.
    public static func uploadedLine(name: String, etag: String) -> String {
        let cleanTag = String(etag.unicodeScalars.filter { $0.isASCII && $0.value > 0x20 && $0.value < 0x7f })
        return name + "\t" + uploadedMarker + "\t" + (cleanTag.isEmpty ? "-" : cleanTag) + "\n"
    }

    static let uploadedMarker = "uploaded"

    /// The names an index marks as uploaded.
    public static func uploadedNames(_ text: String) -> Set<String> {
        var names: Set<String> = []
        for line in text.split(separator: "\n") {
            let fields = line.split(separator: "\t")
            guard fields.count == 3, fields[1] == uploadedMarker else { continue }
            names.insert(String(fields[0]))
        }
        return names
    }
}
