import CV4L2
import KioskCore
import SystemPackage

extension V4L2Device {
    /// The frame rates the device offers for `fourcc` at `size`: a list, a range, or
    /// `.unknown` when the driver does not enumerate intervals.
    /// - Throws: `V4L2Error` for failures other than "none listed".
    ///
    /// The corresponding ioctl is `VIDIOC_ENUM_FRAMEINTERVALS` (which lists seconds per
    /// frame; `FrameRate(interval:)` turns them round).
    public func frameIntervals(_ fourcc: String, size: FrameSize) throws(V4L2Error) -> CameraFrameRates {
        guard let code = FourCC(fourcc), size.width > 0, size.height > 0 else { return .unknown }
        var rates: [FrameRate] = []
        for index in UInt32(0)..<256 {
            var entry = v4l2_frmivalenum()
            entry.index = index
            entry.pixel_format = code.rawValue
            entry.width = UInt32(size.width)
            entry.height = UInt32(size.height)
            if let errno = ioctlErrno(kc_vidioc_enum_frameintervals(), &entry) {
                if errno == .invalidArgument || errno == .inappropriateIOCTLForDevice { break }
                throw V4L2Error(path: path, operation: "VIDIOC_ENUM_FRAMEINTERVALS", errno: errno,
                                detail: "for \(fourcc) \(size)")
            }
            switch entry.type {
            case V4L2_FRMIVAL_TYPE_DISCRETE.rawValue:
                let interval = entry.discrete
                guard interval.numerator > 0, interval.denominator > 0 else { continue }
                let rate = FrameRate(interval: Int(interval.numerator), Int(interval.denominator))
                if !rates.contains(rate) { rates.append(rate) }
            case V4L2_FRMIVAL_TYPE_STEPWISE.rawValue, V4L2_FRMIVAL_TYPE_CONTINUOUS.rawValue:
                let s = entry.stepwise
                guard s.min.numerator > 0, s.min.denominator > 0, s.max.numerator > 0, s.max.denominator > 0 else {
                    return .unknown
                }
                // The shortest interval is the highest rate.
                return .range(minimum: FrameRate(interval: Int(s.max.numerator), Int(s.max.denominator)),
                              maximum: FrameRate(interval: Int(s.min.numerator), Int(s.min.denominator)))
            default:
                break
            }
        }
        return rates.isEmpty ? .unknown : .discrete(rates)
    }
}
