import KioskCore

/// The pages, styles and scripts, written in `web/` and embedded by scripts/embed-web.
enum WebAssets {
    /// A file's bytes and `Content-Type`, or nil for a name that is not served.
    static func file(_ name: String) -> (body: String, contentType: String)? {
        guard let type = WebStaticName.contentType(of: name), let body = files[name] else { return nil }
        return (body, type)
    }
}
