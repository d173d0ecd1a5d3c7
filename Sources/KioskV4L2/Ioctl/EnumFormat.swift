import CV4L2
import SystemPackage

/// One pixel format as VIDIOC_ENUM_FMT lists it.
public struct V4L2FormatDescription: Sendable, Hashable, Codable {
    /// "YUYV", "MJPG", "RGB3".
    public var fourcc: String
    /// The driver's words: "YUYV 4:2:2", "Motion-JPEG".
    public var description: String
    /// A compressed format (MJPEG, H.264): frames vary in size.
    public var compressed: Bool
    /// Made up by libv4l2 (converted in software from another format). Reported by
    /// `kioskcam probe`, never negotiated: the conversion costs CPU that the encoder needs,
    /// and kioskcam converts better itself.
    public var emulated: Bool

    public init(fourcc: String, description: String, compressed: Bool, emulated: Bool) {
        self.fourcc = fourcc
        self.description = description
        self.compressed = compressed
        self.emulated = emulated
    }
}

extension V4L2Device {
    /// The capture formats the device lists, libv4l2's emulated ones included (see `emulated`).
    /// - Throws: `V4L2Error` when VIDIOC_ENUM_FMT fails for another reason than the end
    ///   of the list (e.g. ENODEV: unplugged).
    ///
    /// The corresponding ioctl is `VIDIOC_ENUM_FMT`.
    public func formats() throws(V4L2Error) -> [V4L2FormatDescription] {
        var result: [V4L2FormatDescription] = []
        for index in UInt32(0)..<256 {
            var description = v4l2_fmtdesc()
            description.index = index
            description.type = V4L2_BUF_TYPE_VIDEO_CAPTURE.rawValue
            if let errno = ioctlErrno(kc_vidioc_enum_fmt(), &description) {
                // EINVAL past the last index is the end of the list.
                if errno == .invalidArgument { break }
                throw V4L2Error(path: path, operation: "VIDIOC_ENUM_FMT", errno: errno)
            }
            result.append(V4L2FormatDescription(
                fourcc: FourCC(rawValue: description.pixelformat).description,
                description: cString(description.description),
                compressed: description.flags & UInt32(V4L2_FMT_FLAG_COMPRESSED) != 0,
                emulated: description.flags & UInt32(V4L2_FMT_FLAG_EMULATED) != 0))
        }
        return result
    }
}
