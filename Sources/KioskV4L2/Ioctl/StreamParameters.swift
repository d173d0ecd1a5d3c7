import CV4L2
import KioskCore
import SystemPackage

extension V4L2Device {
    /// The current frame rate, nil when the driver cannot tell (no V4L2_CAP_TIMEPERFRAME
    /// or a zero interval).
    /// - Throws: `V4L2Error` for failures other than "not supported".
    ///
    /// The corresponding ioctl is `VIDIOC_G_PARM`.
    public func frameRate() throws(V4L2Error) -> FrameRate? {
        guard let parameters = try streamParameters() else { return nil }
        return Self.rate(parameters.parm.capture.timeperframe)
    }

    /// Asks for `rate` and returns the rate the driver set; nil when the driver does not
    /// let the rate be chosen (then the camera runs at whatever it runs at).
    /// - Throws: `V4L2Error` (`.busy` while another process streams).
    ///
    /// The corresponding ioctl is `VIDIOC_S_PARM`.
    @discardableResult
    public func setFrameRate(_ rate: FrameRate) throws(V4L2Error) -> FrameRate? {
        guard var parameters = try streamParameters(),
              parameters.parm.capture.capability & UInt32(V4L2_CAP_TIMEPERFRAME) != 0,
              rate.numerator > 0, rate.denominator > 0
        else { return try frameRate() }
        // V4L2 wants seconds per frame: the inverse fraction.
        parameters.parm.capture.timeperframe = v4l2_fract(numerator: UInt32(clamping: rate.denominator),
                                                           denominator: UInt32(clamping: rate.numerator))
        try ioctl(kc_vidioc_s_parm(), &parameters, name: "VIDIOC_S_PARM", detail: "asking for \(rate) fps")
        return Self.rate(parameters.parm.capture.timeperframe)
    }

    private func streamParameters() throws(V4L2Error) -> v4l2_streamparm? {
        var parameters = v4l2_streamparm()
        parameters.type = V4L2_BUF_TYPE_VIDEO_CAPTURE.rawValue
        if let errno = ioctlErrno(kc_vidioc_g_parm(), &parameters) {
            if errno == .inappropriateIOCTLForDevice || errno == .invalidArgument { return nil }
            throw V4L2Error(path: path, operation: "VIDIOC_G_PARM", errno: errno)
        }
        return parameters
    }

    private static func rate(_ interval: v4l2_fract) -> FrameRate? {
        guard interval.numerator > 0, interval.denominator > 0 else { return nil }
        return FrameRate(interval: Int(interval.numerator), Int(interval.denominator))
    }
}
