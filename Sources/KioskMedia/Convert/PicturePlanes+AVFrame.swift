import CAVUtil
import KioskCore

extension PicturePlanes {
    /// The planes of a decoded or to-be-encoded 4:2:0 picture (yuv420p, yuvj420p, nv12,
    /// nv21): what the overlay draws into after the one conversion. nil for another layout.
    init?(frame: UnsafeMutablePointer<AVFrame>) {
        let format: PixelFormat, fullRange: Bool
        switch AVPixelFormat(rawValue: frame.pointee.format) {
        case AV_PIX_FMT_YUV420P: (format, fullRange) = (.yuv420, false)
        case AV_PIX_FMT_YUVJ420P: (format, fullRange) = (.yuv420, true)
        case AV_PIX_FMT_NV12: (format, fullRange) = (.nv12, false)
        case AV_PIX_FMT_NV21: (format, fullRange) = (.nv21, false)
        default: return nil
        }
        let planeCount = format.geometry.planes.count
        let data = [frame.pointee.data.0, frame.pointee.data.1, frame.pointee.data.2].prefix(planeCount)
        let strides = [frame.pointee.linesize.0, frame.pointee.linesize.1, frame.pointee.linesize.2].prefix(planeCount)
        let bases = data.compactMap { $0.map(UnsafeMutableRawPointer.init) }
        guard bases.count == planeCount, strides.allSatisfy({ $0 > 0 }) else { return nil }
        self.init(size: FrameSize(width: Int(frame.pointee.width), height: Int(frame.pointee.height)), format: format,
                  bases: bases, strides: strides.map { Int($0) }, fullRange: fullRange)
    }
}
