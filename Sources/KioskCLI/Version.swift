/// kioskcam's version, shared by both programs (`kioskcam` and `kioskcam-broadcast`) and
/// read by scripts/package-deb.
public enum KioskCamVersion {
    public static let version = "0.1.0"
}
