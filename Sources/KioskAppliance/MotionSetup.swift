import KioskCore
import KioskScreen
import Logging

extension MotionDetector {
    /// The detector `[motion]` describes: its settings, the rectangles and the mask PNG
    /// (read with cairo). A PNG that cannot be read is said in the log and left out, so
    /// motion is still watched where the rectangles allow.
    public static func configured(_ configuration: Configuration, logger: Logger) -> MotionDetector {
        var mask = MotionMask(ignoredRegions: configuration.motion.ignoredRegions)
        if let path = configuration.motion.maskPicture {
            switch GreyPicture.load(png: path) {
            case .success(let picture): mask.picture = picture
            case .failure(let error):
                logger.error("motion.mask_png: \(error); motion is watched everywhere the rectangles allow — fix the file and restart")
            }
        }
        return MotionDetector(settings: configuration.motion.detectorSettings, mask: mask)
    }
}
