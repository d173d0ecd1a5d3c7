/// The MIME type a browser's `MediaSource.addSourceBuffer` needs for our live fMP4,
/// read from the init segment itself: `avc1.PPCCLL` from the `avcC` box (profile,
/// constraint flags, level), and `mp4a.40.2` when an `mp4a` sample entry is present.
public enum MSEMimeType {
    /// The type, or nil when the segment carries no `avcC` (not our H.264 init segment).
    public static func of(initSegment bytes: [UInt8]) -> String? {
        guard let avcC = find(Array("avcC".utf8), in: bytes), avcC + 7 < bytes.count, bytes[avcC + 4] == 1 else { return nil }
        let profile = bytes[avcC + 5], constraints = bytes[avcC + 6], level = bytes[avcC + 7]
        var codecs = "avc1." + hex(profile) + hex(constraints) + hex(level)
        if find(Array("mp4a".utf8), in: bytes) != nil { codecs += ", mp4a.40.2" }
        return "video/mp4; codecs=\"\(codecs)\""
    }

    private static func hex(_ byte: UInt8) -> String {
        let text = String(byte, radix: 16)
        return text.count == 1 ? "0" + text : text
    }

    private static func find(_ needle: [UInt8], in haystack: [UInt8]) -> Int? {
        guard haystack.count >= needle.count else { return nil }
        for index in 0...(haystack.count - needle.count) where haystack[index] == needle[0] {
            if haystack[index..<(index + needle.count)].elementsEqual(needle) { return index }
        }
        return nil
    }
}
