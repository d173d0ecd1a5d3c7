import CV4L2
import KioskCore
import SystemPackage

/// A capture format as the driver set it: what every buffer will hold.
public struct V4L2PixelFormat: Sendable, Hashable, CustomStringConvertible {
    public var fourcc: String
    public var size: FrameSize
    /// Bytes from one row to the next in the first plane — may exceed the pixels'
    /// bytes (rows padded for alignment). 0 for compressed formats.
    public var bytesPerLine: Int
    /// Bytes a buffer needs for one frame (the maximum, for compressed formats).
    public var sizeImage: Int
    /// V4L2 field order (1 = progressive).
    public var field: UInt32

    public init(fourcc: String, size: FrameSize, bytesPerLine: Int, sizeImage: Int, field: UInt32 = 1) {
        self.fourcc = fourcc
        self.size = size
        self.bytesPerLine = bytesPerLine
        self.sizeImage = sizeImage
        self.field = field
    }

    init(_ pix: v4l2_pix_format) {
        self.init(fourcc: FourCC(rawValue: pix.pixelformat).description,
                  size: FrameSize(width: Int(pix.width), height: Int(pix.height)),
                  bytesPerLine: Int(pix.bytesperline), sizeImage: Int(pix.sizeimage), field: pix.field)
    }

    public var description: String { "\(size) \(fourcc) (\(bytesPerLine) bytes per line, \(sizeImage) per frame)" }
}

extension V4L2Device {
    /// The current capture format.
    /// - Throws: `V4L2Error` (e.g. ENODEV).
    ///
    /// The corresponding ioctl is `VIDIOC_G_FMT`.
    public func format() throws(V4L2Error) -> V4L2PixelFormat {
        var format = v4l2_format()
        format.type = V4L2_BUF_TYPE_VIDEO_CAPTURE.rawValue
        try ioctl(kc_vidioc_g_fmt(), &format, name: "VIDIOC_G_FMT")
        return V4L2PixelFormat(format.fmt.pix)
    }

    /// Sets the capture format and returns what the driver chose instead — drivers adjust
    /// silently (vivid turns 320x240 into 320x180), and pad rows (`bytesPerLine`).
    /// - Throws: `V4L2Error`: `.busy` while another process streams, `.rejected`.
    ///
    /// The corresponding ioctl is `VIDIOC_S_FMT` (`VIDIOC_TRY_FMT` with `tryOnly`).
    @discardableResult
    public func setFormat(fourcc: String, size: FrameSize, tryOnly: Bool = false) throws(V4L2Error) -> V4L2PixelFormat {
        guard let code = FourCC(fourcc) else {
            throw V4L2Error(.rejected, path: path, operation: tryOnly ? "VIDIOC_TRY_FMT" : "VIDIOC_S_FMT",
                            detail: "\"\(fourcc)\" is not a fourcc")
        }
        var format = v4l2_format()
        format.type = V4L2_BUF_TYPE_VIDEO_CAPTURE.rawValue
        format.fmt.pix.width = UInt32(clamping: size.width)
        format.fmt.pix.height = UInt32(clamping: size.height)
        format.fmt.pix.pixelformat = code.rawValue
        format.fmt.pix.field = V4L2_FIELD_NONE.rawValue
        try ioctl(tryOnly ? kc_vidioc_try_fmt() : kc_vidioc_s_fmt(), &format,
                  name: tryOnly ? "VIDIOC_TRY_FMT" : "VIDIOC_S_FMT", detail: "asking for \(size) \(fourcc)")
        return V4L2PixelFormat(format.fmt.pix)
    }
}
