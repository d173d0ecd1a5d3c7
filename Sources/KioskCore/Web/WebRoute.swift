/// Who may reach a route.
public enum WebAccess: Sendable, Equatable {
    /// The login page, its static files and `POST /api/login`: nothing else.
    case open
    /// Any logged-in user.
    case user(WebRole)
}

/// Every route of the web app, matched from a method and a path. The table is the one
/// place that says what needs a login and which role: `access` is total over the cases,
/// and a test walks every case.
public enum WebRoute: Equatable, Sendable {
    case root
    case loginPage
    case page(WebPage)
    case staticFile(String)
    case loginInfo
    case login
    case logout
    case me
    case status
    case library
    case events
    case media(WebMediaPath)
    case deleteMedia(WebMediaPath)
    case thumbnail(WebMediaPath)
    /// A clip `POST /api/export` made (`<media root>/exports/tmp/<name>`).
    case exportedClip(String)
    case snapshotJPEG
    case live
    /// Native HLS for browsers without Media Source Extensions (older iPhones): the
    /// playlist, its init segment, and one segment (a GOP) by sequence number.
    case livePlaylist
    case liveInit
    case liveSegment(Int)
    case recording
    case snapshot
    case event
    case export
    case settings
    case changeSettings

    /// Who may use the route.
    public var access: WebAccess {
        switch self {
        case .loginPage, .staticFile, .loginInfo, .login: .open
        case .root, .page(.live), .page(.library), .page(.events), .page(.status), .logout, .me, .status, .library, .events,
             .media, .thumbnail, .exportedClip, .snapshotJPEG, .live, .livePlaylist, .liveInit, .liveSegment: .user(.viewer)
        case .page(.settings), .deleteMedia, .recording, .snapshot, .event, .export, .settings, .changeSettings: .user(.admin)
        }
    }

    /// Whether the route changes state (and so must pass the Origin check).
    public var changesState: Bool {
        switch self {
        case .login, .logout, .deleteMedia, .recording, .snapshot, .event, .export, .changeSettings: true
        default: false
        }
    }

    /// The outcome of matching a request line.
    public enum Match: Equatable, Sendable {
        case route(WebRoute)
        case notFound
        /// The path exists with other methods (answer 405 with `Allow`).
        case methodNotAllowed(allowed: [String])
    }

    /// Matches `method` and the request's path (no query; still percent-encoded as it came).
    ///
    /// Library paths are parsed by `WebMediaPath`, which accepts no `%`, so an encoded
    /// dot or slash is simply not found.
    public static func match(method: String, path: String) -> Match {
        guard path.hasPrefix("/"), path.utf8.count <= 512, !path.contains("\\") else { return .notFound }
        let parts = path.dropFirst().split(separator: "/", omittingEmptySubsequences: false).map(String.init)
        func only(_ methods: [String: WebRoute]) -> Match {
            if let route = methods[method] { return .route(route) }
            if method == "HEAD", let route = methods["GET"] { return .route(route) }
            return .methodNotAllowed(allowed: methods.keys.sorted())
        }
        switch parts.count {
        case 1:
            switch parts[0] {
            case "": return only(["GET": .root])
            case "login": return only(["GET": .loginPage])
            case "favicon.ico": return only(["GET": .staticFile("icon.svg")])
            case let name:
                guard let page = WebPage(rawValue: name) else { return .notFound }
                return only(["GET": .page(page)])
            }
        case 2 where parts[0] == "static":
            guard WebStaticName.isValid(parts[1]) else { return .notFound }
            return only(["GET": .staticFile(parts[1])])
        case 2 where parts[0] == "api":
            switch parts[1] {
            case "login": return only(["GET": .loginInfo, "POST": .login])
            case "logout": return only(["POST": .logout])
            case "me": return only(["GET": .me])
            case "status": return only(["GET": .status])
            case "library": return only(["GET": .library])
            case "events": return only(["GET": .events])
            case "snapshot.jpg": return only(["GET": .snapshotJPEG])
            case "live": return only(["GET": .live])
            case "live.m3u8": return only(["GET": .livePlaylist])
            case "recording": return only(["POST": .recording])
            case "snapshot": return only(["POST": .snapshot])
            case "event": return only(["POST": .event])
            case "export": return only(["POST": .export])
            case "settings": return only(["GET": .settings, "PUT": .changeSettings])
            default: return .notFound
            }
        case 3 where parts[0] == "api" && parts[1] == "live":
            if parts[2] == "init.mp4" { return only(["GET": .liveInit]) }
            // "N.m4s": 1 to 9 digits, no sign, no leading zero but "0" itself.
            guard parts[2].hasSuffix(".m4s"), case let digits = parts[2].dropLast(4), (1...9).contains(digits.count),
                  digits.allSatisfy({ $0.isASCII && $0.isNumber }), digits == "0" || !digits.hasPrefix("0"),
                  let sequence = Int(digits) else { return .notFound }
            return only(["GET": .liveSegment(sequence)])
        case 2 where parts[0] == "exports":
            guard WebExportName.isValid(parts[1]) else { return .notFound }
            return only(["GET": .exportedClip(parts[1])])
        case 4 where parts[0] == "media":
            guard let file = WebMediaPath(kind: parts[1], day: parts[2], name: parts[3]) else { return .notFound }
            return only(["GET": .media(file), "DELETE": .deleteMedia(file)])
        case 4 where parts[0] == "thumbs":
            guard let file = WebMediaPath(kind: parts[1], day: parts[2], name: parts[3]) else { return .notFound }
            return only(["GET": .thumbnail(file)])
        default:
            return .notFound
        }
    }
}

/// The pages behind the login.
public enum WebPage: String, Sendable, CaseIterable {
    case live, library, events, status, settings
}

/// A static file's name: `[a-z0-9-]+.(html|css|js|svg|png|webmanifest)`, nothing else.
public enum WebStaticName {
    public static let types: [String: String] = [
        "html": "text/html; charset=utf-8", "css": "text/css; charset=utf-8", "js": "text/javascript; charset=utf-8",
        "svg": "image/svg+xml", "png": "image/png", "webmanifest": "application/manifest+json",
    ]

    public static func isValid(_ name: String) -> Bool { contentType(of: name) != nil }

    /// The `Content-Type` of a valid name, or nil.
    public static func contentType(of name: String) -> String? {
        let parts = name.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 2, (1...40).contains(parts[0].utf8.count),
              parts[0].utf8.allSatisfy({ (97...122).contains($0) || (48...57).contains($0) || $0 == 45 }) else { return nil }
        return types[String(parts[1])]
    }
}

/// An exported clip's file name as `LibraryLayout.exportName` makes it:
/// `video-20261128-101455_1500-4000.mp4` — `a-z 0-9 - _ .`, one of the clip extensions, no `..`.
public enum WebExportName {
    public static func isValid(_ name: String) -> Bool {
        let bytes = Array(name.utf8)
        guard (5...120).contains(bytes.count), !name.hasPrefix("."), !name.contains(".."),
              ["mp4", "m4a", "wav"].contains(where: { name.hasSuffix("." + $0) }) else { return false }
        return bytes.allSatisfy { (97...122).contains($0) || (48...57).contains($0) || $0 == 45 || $0 == 95 || $0 == 46 }
    }
}
