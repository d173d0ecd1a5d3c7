import CV4L2
import KioskCore
import SystemPackage

extension V4L2Device {
    /// The frame sizes the device offers for `fourcc`: a list of discrete sizes, or one
    /// stepwise range (continuous is a range with step 1x1). Empty when the driver does
    /// not enumerate sizes for this format.
    /// - Throws: `V4L2Error` for failures other than "no sizes listed".
    ///
    /// The corresponding ioctl is `VIDIOC_ENUM_FRAMESIZES`.
    public func frameSizes(_ fourcc: String) throws(V4L2Error) -> [CameraFrameSizes] {
        guard let code = FourCC(fourcc) else { return [] }
        var result: [CameraFrameSizes] = []
        for index in UInt32(0)..<1024 {
            var entry = v4l2_frmsizeenum()
            entry.index = index
            entry.pixel_format = code.rawValue
            if let errno = ioctlErrno(kc_vidioc_enum_framesizes(), &entry) {
                // EINVAL ends the list; ENOTTY: the driver does not enumerate sizes at all.
                if errno == .invalidArgument || errno == .inappropriateIOCTLForDevice { break }
                throw V4L2Error(path: path, operation: "VIDIOC_ENUM_FRAMESIZES", errno: errno, detail: "for \(fourcc)")
            }
            switch entry.type {
            case V4L2_FRMSIZE_TYPE_DISCRETE.rawValue:
                result.append(.discrete(FrameSize(width: Int(entry.discrete.width), height: Int(entry.discrete.height))))
            case V4L2_FRMSIZE_TYPE_STEPWISE.rawValue, V4L2_FRMSIZE_TYPE_CONTINUOUS.rawValue:
                let s = entry.stepwise
                let continuous = entry.type == V4L2_FRMSIZE_TYPE_CONTINUOUS.rawValue
                result.append(.stepwise(
                    minimum: FrameSize(width: Int(s.min_width), height: Int(s.min_height)),
                    maximum: FrameSize(width: Int(s.max_width), height: Int(s.max_height)),
                    step: continuous ? FrameSize(width: 1, height: 1)
                        : FrameSize(width: max(1, Int(s.step_width)), height: max(1, Int(s.step_height)))))
                // A range is the only entry.
                return result
            default:
                return result
            }
        }
        return result
    }
}
