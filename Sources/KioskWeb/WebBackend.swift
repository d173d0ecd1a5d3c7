import KioskControl
import KioskCore
import KioskRecording

/// What the web app asks of the appliance: the control protocol's handler (the same one
/// the socket uses), the newest picture, and where the library is.
public struct WebBackend: Sendable {
    public var control: any ControlHandler
    /// The next camera frame as JPEG, not saved. Blocking.
    public var currentPictureJPEG: @Sendable () throws -> [UInt8]
    public var layout: LibraryLayout
    /// The live view's fan-out (nil: no camera).
    public var live: LiveStream?
    /// The configuration in effect (changed by a reload).
    public var configuration: @Sendable () -> Configuration
    /// The daemon's reload (the one SIGHUP runs), after the settings page saved; its
    /// argument says who asked. Nil: saving settings is refused (nothing would apply them).
    public var reload: (@Sendable (_ cause: String) -> SettingsReloadOutcome)?
    /// ONVIF's services (`[onvif] enabled`): the facts answers are made of, for the host a
    /// client reached us by. Nil: `/onvif/…` is not served.
    public var onvifDevice: (@Sendable (_ host: String) -> ONVIFDevice?)?

    public init(control: any ControlHandler, currentPictureJPEG: @escaping @Sendable () throws -> [UInt8], layout: LibraryLayout,
                live: LiveStream?, configuration: @escaping @Sendable () -> Configuration,
                reload: (@Sendable (_ cause: String) -> SettingsReloadOutcome)? = nil) {
        self.configuration = configuration
        self.reload = reload
        self.control = control
        self.currentPictureJPEG = currentPictureJPEG
        self.layout = layout
        self.live = live
    }
}

/// What a reload after saved settings did: the sections in effect now, those that wait for
/// a restart, or the error that kept the old configuration.
public struct SettingsReloadOutcome: Sendable, Equatable {
    public var appliedNow: [String]
    public var needRestart: [String]
    public var error: String?

    public init(appliedNow: [String] = [], needRestart: [String] = [], error: String? = nil) {
        self.appliedNow = appliedNow
        self.needRestart = needRestart
        self.error = error
    }
}
