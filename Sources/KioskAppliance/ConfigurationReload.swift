import KioskCore

/// What a SIGHUP reload changed, and which of it the running daemon takes on at once.
///
/// Storage (retention, disk guard) is read afresh where it is used, so it applies
/// immediately; devices, encoder settings and the screen logic (which holds the lock
/// timing) are fixed while their threads run, so those sections need a restart.
public struct ConfigurationReload: Sendable, Equatable {
    /// Sections that changed and are in effect now.
    public var appliedNow: [String]
    /// Sections that changed but only take effect after `systemctl restart kioskcam`.
    public var needRestart: [String]

    public init(from old: Configuration, to new: Configuration) {
        let sections: [(String, Bool, Bool)] = [
            ("storage", old.storage != new.storage, true),
            ("lock", old.lock != new.lock, false),
            ("camera", old.camera != new.camera, false),
            ("microphone", old.microphone != new.microphone, false),
            ("encoder", old.encoder != new.encoder, false),
            ("snapshot", old.snapshot != new.snapshot, false),
            ("stream", old.stream != new.stream, false),
            ("events", old.events != new.events, false),
            ("motion", old.motion != new.motion, false),
            ("logging", old.logging != new.logging, false),
            ("buttons", old.buttons != new.buttons, false),
            ("touch", old.touch != new.touch, false),
            ("screen", old.screen != new.screen, false),
            ("control", old.control != new.control, false),
            ("mqtt", old.mqtt != new.mqtt, false),
            ("upload", old.upload != new.upload, false),
            ("web", old.web != new.web, false),
            ("rtsp", old.rtsp != new.rtsp, false),
            ("onvif", old.onvif != new.onvif, false),
            ("overlay", old.overlay != new.overlay, false),
            ("privacy", old.privacy != new.privacy, false),
            ("timelapse", old.timelapse != new.timelapse, false),
        ]
        appliedNow = sections.filter { $0.1 && $0.2 }.map(\.0)
        needRestart = sections.filter { $0.1 && !$0.2 }.map(\.0)
    }

    public var isEmpty: Bool { appliedNow.isEmpty && needRestart.isEmpty }

    /// One log line: "reloaded: [storage] applied; [camera] needs a restart (…)".
    public var summary: String {
        if isEmpty { return "configuration reloaded: nothing changed" }
        var parts: [String] = []
        if !appliedNow.isEmpty { parts.append(appliedNow.map { "[\($0)]" }.joined(separator: ", ") + " applied now") }
        if !needRestart.isEmpty {
            parts.append(needRestart.map { "[\($0)]" }.joined(separator: ", ")
                         + " changed but need a restart to take effect: systemctl restart kioskcam")
        }
        return "configuration reloaded: " + parts.joined(separator: "; ")
    }
}

/// Why a reload kept the configuration in effect (the file's error, as `config check` says it).
public struct ConfigurationReloadFailure: Error, Sendable {
    public var message: String
}
