/// Choosing what a camera should deliver, from what it offers — pure, so every rule is
/// unit-tested without a device. `KioskV4L2` turns a device's ENUM_FMT /
/// ENUM_FRAMESIZES / ENUM_FRAMEINTERVALS answers into `CameraFormatOffer`s, asks
/// `CameraFormatNegotiation.choose`, and then reads back what the driver really set.
///
/// The rules, in order (the first that tells two candidates apart decides):
///
/// 1. **Frame rate reachable.** A candidate that can deliver the requested rate (within
///    1 %, so 29.97 counts as 30) beats one whose driver lists no rates, which beats
///    one that cannot. The recording pipeline expects the configured rate
///    (30 fps expected, a keyframe every 30 frames), so a webcam offering YUYV
///    1280x720 only at 10 fps and MJPEG 1280x720 at 30 fps is asked for MJPEG — and a
///    YUYV-only one for its largest size that still runs at 30 fps.
/// 2. **Size.** The requested size exactly; else the smallest size at least as large
///    in both dimensions (fewest pixels); else the largest size below (most pixels).
///    In a stepwise range each dimension snaps independently to the grid: the
///    smallest step at or above the request, else the largest. Sizes with an odd
///    width or height are skipped: 4:2:0 output and the H.264 encoder need even ones.
/// 3. **Rate closeness.** The offered rate nearest the request (the higher on a tie).
/// 4. **The preferred fourcc** (`camera.pixel_format`), among otherwise equal choices.
/// 5. **Format cost** (`PixelFormat.Cost`): layouts the encoder takes without conversion
///    (YU12, NV12); 4:2:0 with U and V swapped (YV12, NV21); 4:2:2 YUV (YUYV, UYVY, NV16,
///    NV61, VYUY, 422P, YVYU); RGB (a colour-space conversion: BGR3, the 32-bit family,
///    RGB3, RGB565); MJPEG (MJPG, JPEG: decoded to YU12 on the CPU); 8-bit Bayer (BA81,
///    GBRG, GRBG, RGGB: demosaiced); greyscale last (GREY: no colour). Within one cost,
///    the order of `usableFourCCs`.
///
/// Over 400 lines as one thing: one ordering of candidates; the rules above and the code
/// that applies them are kept side by side so they cannot drift.
public enum CameraFormatNegotiation {
    /// Picks the format, size and rate to ask the camera for.
    /// - Parameters:
    ///   - offers: What the device lists (every format, usable or not: the unusable
    ///     ones are named in the reason and in errors).
    ///   - request: The configured size, rate and preferred fourcc.
    /// - Returns: The choice and a one-line human reason for logs.
    /// - Throws: `CameraFormatNegotiationError` when no offered fourcc is one kioskcam
    ///   can record, or the usable ones come only in odd sizes.
    public static func choose(from offers: [CameraFormatOffer],
                              for request: CameraFormatRequest) throws(CameraFormatNegotiationError) -> CameraFormatChoice {
        let usable = offers.filter { CameraDelivery(fourcc: $0.fourcc) != nil }
        guard !usable.isEmpty else {
            throw CameraFormatNegotiationError(
                request: request, offers: offers,
                problem: offers.isEmpty ? "the camera lists no pixel formats" : "the camera offers no pixel format kioskcam can record")
        }
        // The best candidate of each usable fourcc, in offer order.
        var bestPerFourCC: [Candidate] = []
        for offer in usable {
            guard let delivery = CameraDelivery(fourcc: offer.fourcc) else { continue }
            var best: Candidate?
            for entry in offer.sizes {
                guard let size = entry.sizes.nearest(to: request.size) else { continue }
                let rate = entry.rates.nearest(to: request.framesPerSecond)
                let candidate = Candidate(fourcc: offer.fourcc, delivery: delivery, size: size, rate: rate,
                                          request: request)
                if let current = best, !candidate.isBetter(than: current, withinOneFormat: true) { continue }
                best = candidate
            }
            if let best { bestPerFourCC.append(best) }
        }
        guard var winner = bestPerFourCC.first else {
            throw CameraFormatNegotiationError(request: request, offers: offers,
                                               problem: "the camera offers its usable formats only in odd sizes, which 4:2:0 video cannot have")
        }
        for candidate in bestPerFourCC.dropFirst() where candidate.isBetter(than: winner, withinOneFormat: false) {
            winner = candidate
        }
        let reason = Reason(request: request, offers: offers, winner: winner, others: bestPerFourCC).text
        return CameraFormatChoice(fourcc: winner.fourcc, delivery: winner.delivery, size: winner.size,
                                  frameRate: winner.rate.rate, reason: reason)
    }

    /// Fourccs kioskcam can record, most preferred first (rule 5's order).
    public static let usableFourCCs: [String] = {
        let fourccs = PixelFormat.allCases.map { ($0.cost, $0.rawValue) }
            + CameraDelivery.jpegFourCCs.map { (PixelFormat.Cost.jpeg, $0) }
        // Stable: within one cost, the declaration order of `PixelFormat`.
        return fourccs.enumerated().sorted { ($0.element.0, $0.offset) < ($1.element.0, $1.offset) }.map(\.element.1)
    }()
}

/// What the camera is asked for.
public struct CameraFormatRequest: Hashable, Sendable, CustomStringConvertible {
    public var size: FrameSize
    public var framesPerSecond: Int
    /// A fourcc to take when it is as good as the alternatives (rule 4); nil for none.
    public var preferredFourCC: String?

    public init(size: FrameSize, framesPerSecond: Int, preferredFourCC: String? = nil) {
        self.size = size
        self.framesPerSecond = framesPerSecond
        self.preferredFourCC = preferredFourCC
    }

    /// The configured format, with its pixel format as the preferred fourcc.
    public init(_ format: VideoFormat) {
        self.init(size: format.size, framesPerSecond: format.framesPerSecond, preferredFourCC: format.pixelFormat.rawValue)
    }

    public var description: String {
        "\(size) \(preferredFourCC.map { $0 + " " } ?? "")@\(framesPerSecond)"
    }
}

/// How frames of a fourcc reach the pipeline.
public enum CameraDelivery: Hashable, Sendable {
    /// Copied as they come (row padding removed), converted by the encoder's libswscale.
    case raw(PixelFormat)
    /// JPEG frames, decoded to YU12.
    case mjpeg

    /// The fourccs that carry JPEG frames.
    static let jpegFourCCs = ["MJPG", "JPEG"]

    /// nil for fourccs kioskcam cannot record (H.264, 10-bit or packed Bayer, …). Raw
    /// fourccs are matched exactly as drivers spell them (V4L2's codes are case-sensitive:
    /// 'pBAA' is packed 10-bit Bayer); "MJPG"/"JPEG" in any case.
    public init?(fourcc: String) {
        if Self.jpegFourCCs.contains(fourcc.uppercased()) {
            self = .mjpeg
        } else if let layout = PixelFormat(rawValue: fourcc) {
            self = .raw(layout)
        } else {
            return nil
        }
    }

    /// The layout frames have when they reach the pipeline.
    public var pixelFormat: PixelFormat {
        switch self {
        case .raw(let format): format
        case .mjpeg: .yuv420
        }
    }

    /// What turning these frames into the encoder's 4:2:0 costs.
    public var cost: PixelFormat.Cost {
        switch self {
        case .raw(let format): format.cost
        case .mjpeg: .jpeg
        }
    }

    /// Rule 5's rank: 0 (the encoder takes it as is) upwards.
    public var costRank: Int { cost.rawValue }

    var costPhrase: String { cost.phrase }
}

/// A frame rate as an exact fraction of frames per second. V4L2 lists the inverse
/// (a frame *interval*, seconds per frame): use `init(interval:)` for those.
public struct FrameRate: Hashable, Sendable, Codable, Comparable, CustomStringConvertible {
    /// Frames…
    public var numerator: Int
    /// …per this many seconds.
    public var denominator: Int

    /// `numerator/denominator` frames per second, reduced (60/2 equals 30/1).
    public init(_ numerator: Int, _ denominator: Int = 1) {
        let sign = denominator < 0 ? -1 : 1
        var a = abs(numerator), b = abs(denominator)
        while b != 0 { (a, b) = (b, a % b) }
        let divisor = max(a, 1)
        self.numerator = sign * numerator / divisor
        self.denominator = abs(denominator) / divisor
    }

    /// From a frame interval of `numerator/denominator` seconds (V4L2's `v4l2_fract`).
    public init(interval numerator: Int, _ denominator: Int) {
        self.init(denominator, numerator)
    }

    /// 0 for a malformed fraction (zero denominator) rather than infinity.
    public var framesPerSecond: Double { denominator == 0 ? 0 : Double(numerator) / Double(denominator) }

    /// The nearest whole number of frames per second (29.97 → 30), at least 1.
    public var roundedFramesPerSecond: Int { max(1, Int(framesPerSecond.rounded())) }

    /// "30", "29.97", "7.5".
    public var description: String {
        if denominator == 1 { return String(numerator) }
        let hundredths = (framesPerSecond * 100).rounded() / 100
        return hundredths == hundredths.rounded() ? String(Int(hundredths)) : String(hundredths)
    }

    public static func < (lhs: Self, rhs: Self) -> Bool { lhs.framesPerSecond < rhs.framesPerSecond }
}

/// One pixel format as the device lists it.
public struct CameraFormatOffer: Hashable, Sendable {
    /// V4L2's four-character code, e.g. "YUYV", "MJPG".
    public var fourcc: String
    /// The driver's description, e.g. "YUYV 4:2:2".
    public var description: String
    /// Sizes with the rates each allows. Empty: the driver lists none.
    public var sizes: [CameraSizeOffer]

    public init(fourcc: String, description: String = "", sizes: [CameraSizeOffer]) {
        self.fourcc = fourcc
        self.description = description
        self.sizes = sizes
    }

    /// Discrete sizes that all share `rates` (whole frames per second).
    public init(fourcc: String, description: String = "", sizes: [FrameSize], rates: [Int]) {
        self.init(fourcc: fourcc, description: description,
                  sizes: sizes.map { CameraSizeOffer(.discrete($0), rates: .discrete(rates.map { FrameRate($0) })) })
    }
}

/// A size (or a range of sizes) and the frame rates the device offers there.
public struct CameraSizeOffer: Hashable, Sendable {
    public var sizes: CameraFrameSizes
    public var rates: CameraFrameRates

    public init(_ sizes: CameraFrameSizes, rates: CameraFrameRates) {
        self.sizes = sizes
        self.rates = rates
    }

    /// One discrete size at whole-number rates.
    public static func size(_ width: Int, _ height: Int, fps: [Int]) -> Self {
        Self(.discrete(FrameSize(width: width, height: height)), rates: .discrete(fps.map { FrameRate($0) }))
    }
}

/// V4L2's three kinds of frame size: discrete, stepwise, continuous (stepwise with step 1).
public enum CameraFrameSizes: Hashable, Sendable {
    case discrete(FrameSize)
    case stepwise(minimum: FrameSize, maximum: FrameSize, step: FrameSize)

    /// The size rule 2 picks from this entry for `request`; nil when it holds no even size.
    public func nearest(to request: FrameSize) -> FrameSize? {
        switch self {
        case .discrete(let size):
            return size.width > 0 && size.height > 0 && size.width % 2 == 0 && size.height % 2 == 0 ? size : nil
        case .stepwise(let minimum, let maximum, let step):
            guard let width = Self.snap(request.width, minimum.width, maximum.width, step.width),
                  let height = Self.snap(request.height, minimum.height, maximum.height, step.height)
            else { return nil }
            return FrameSize(width: width, height: height)
        }
    }

    /// The smallest even grid value `lower + k·step` ≥ `wanted` (≤ `upper`), else the largest even one.
    static func snap(_ wanted: Int, _ lower: Int, _ upper: Int, _ step: Int) -> Int? {
        let step = max(step, 1)
        guard lower <= upper, upper > 0 else { return nil }
        let last = (upper - lower) / step
        func value(_ k: Int) -> Int { lower + k * step }
        // Parity alternates when the step is odd, so an even value is at most one step away.
        let first = max(0, (wanted - lower + step - 1) / step)
        for k in [first, first + 1] where k <= last && value(k) % 2 == 0 && value(k) > 0 { return value(k) }
        for k in [last, last - 1] where k >= 0 && value(k) % 2 == 0 && value(k) > 0 { return value(k) }
        return nil
    }

    /// "640x480" or "16x16…1920x1080 step 8x8".
    public var text: String {
        switch self {
        case .discrete(let size): size.description
        case .stepwise(let minimum, let maximum, let step):
            step.width == 1 && step.height == 1 ? "\(minimum)…\(maximum)" : "\(minimum)…\(maximum) step \(step)"
        }
    }
}

/// Frame rates at one size: a list, a range, or nothing listed.
public enum CameraFrameRates: Hashable, Sendable {
    case discrete([FrameRate])
    /// Every rate from `minimum` to `maximum` frames per second.
    case range(minimum: FrameRate, maximum: FrameRate)
    /// The driver lists no rates (no ENUM_FRAMEINTERVALS): the request is tried and read back.
    case unknown

    /// Rule 1 and 3's view of this entry for `framesPerSecond`.
    func nearest(to framesPerSecond: Int) -> RateMatch {
        let wanted = Double(framesPerSecond)
        func reaches(_ rate: FrameRate) -> Bool { abs(rate.framesPerSecond - wanted) <= wanted * 0.01 }
        switch self {
        case .unknown:
            return RateMatch(rate: FrameRate(framesPerSecond), reachability: .unlisted, distance: 0)
        case .discrete(let rates):
            guard var best = rates.first else {
                return RateMatch(rate: FrameRate(framesPerSecond), reachability: .unlisted, distance: 0)
            }
            for rate in rates.dropFirst() {
                let d = abs(rate.framesPerSecond - wanted), bestD = abs(best.framesPerSecond - wanted)
                if d < bestD || (d == bestD && rate > best) { best = rate }
            }
            return RateMatch(rate: best, reachability: reaches(best) ? .reaches : .misses,
                             distance: abs(best.framesPerSecond - wanted))
        case .range(let minimum, let maximum):
            let rate: FrameRate
            if wanted < minimum.framesPerSecond { rate = minimum }
            else if wanted > maximum.framesPerSecond { rate = maximum }
            else { rate = FrameRate(framesPerSecond) }
            return RateMatch(rate: rate, reachability: reaches(rate) ? .reaches : .misses,
                             distance: abs(rate.framesPerSecond - wanted))
        }
    }

    /// "25/30/50/60", "1…60", "?".
    public var text: String {
        switch self {
        case .discrete(let rates): rates.isEmpty ? "?" : rates.sorted().map(\.description).joined(separator: "/")
        case .range(let minimum, let maximum): "\(minimum)…\(maximum)"
        case .unknown: "?"
        }
    }
}

/// How one size entry's rates meet the requested rate.
struct RateMatch: Hashable, Sendable {
    enum Reachability: Int, Comparable {
        case reaches = 0, unlisted = 1, misses = 2
        static func < (lhs: Self, rhs: Self) -> Bool { lhs.rawValue < rhs.rawValue }
    }
    var rate: FrameRate
    var reachability: Reachability
    /// |offered − requested| frames per second.
    var distance: Double
}

/// What to ask the camera for.
public struct CameraFormatChoice: Hashable, Sendable {
    public var fourcc: String
    public var delivery: CameraDelivery
    public var size: FrameSize
    /// The rate to ask for (the request itself when the driver lists none).
    public var frameRate: FrameRate
    /// "asked …; device offers …; chose … because …" — for the log.
    public var reason: String

    public init(fourcc: String, delivery: CameraDelivery, size: FrameSize, frameRate: FrameRate, reason: String) {
        self.fourcc = fourcc
        self.delivery = delivery
        self.size = size
        self.frameRate = frameRate
        self.reason = reason
    }

    /// What the pipeline will receive: raw frames as they are, MJPEG decoded to YU12.
    public var output: VideoFormat {
        VideoFormat(size: size, pixelFormat: delivery.pixelFormat, framesPerSecond: frameRate.roundedFramesPerSecond)
    }
}

/// The camera cannot serve the request in any format kioskcam can record.
public struct CameraFormatNegotiationError: Error, Sendable, CustomStringConvertible {
    public var request: CameraFormatRequest
    public var offers: [CameraFormatOffer]
    public var problem: String

    public var description: String {
        var text = "\(problem) (asked \(request))"
        if !offers.isEmpty {
            text += "; it offers " + offers.map { offer in
                let sizes = Reason.sizeList(offer, limit: 4)
                let name = offer.description.isEmpty || offer.description == offer.fourcc ? offer.fourcc : "\(offer.fourcc) (\(offer.description))"
                return sizes.isEmpty ? name : "\(name) \(sizes)"
            }.joined(separator: ", ")
        }
        return text + "; kioskcam records " + CameraFormatNegotiation.usableFourCCs.joined(separator: ", ")
    }
}

// MARK: - Ranking

/// The best size and rate of one fourcc, with the keys rules 1–5 compare.
struct Candidate: Sendable {
    var fourcc: String
    var delivery: CameraDelivery
    var size: FrameSize
    var rate: RateMatch
    /// 0: exactly the requested size, 1: larger in both dimensions, 2: smaller in one.
    var sizeClass: Int
    /// Within a class, smaller is better: pixels for class 1, minus pixels for class 2.
    var sizeKey: Int
    var isPreferred: Bool

    init(fourcc: String, delivery: CameraDelivery, size: FrameSize, rate: RateMatch, request: CameraFormatRequest) {
        self.fourcc = fourcc
        self.delivery = delivery
        self.size = size
        self.rate = rate
        if size == request.size {
            sizeClass = 0; sizeKey = 0
        } else if size.width >= request.size.width && size.height >= request.size.height {
            sizeClass = 1; sizeKey = size.pixelCount
        } else {
            sizeClass = 2; sizeKey = -size.pixelCount
        }
        isPreferred = request.preferredFourCC.map { $0.uppercased() == fourcc.uppercased() } ?? false
    }

    /// The rule that first tells `self` and `other` apart, or nil when they tie.
    func decidingRule(against other: Candidate, withinOneFormat: Bool) -> (rule: Rule, selfWins: Bool)? {
        if rate.reachability != other.rate.reachability { return (.rateReachable, rate.reachability < other.rate.reachability) }
        if sizeClass != other.sizeClass { return (.size, sizeClass < other.sizeClass) }
        if sizeKey != other.sizeKey { return (.size, sizeKey < other.sizeKey) }
        if rate.distance != other.rate.distance { return (.rateDistance, rate.distance < other.rate.distance) }
        if rate.rate != other.rate.rate { return (.rateDistance, rate.rate > other.rate.rate) }
        if withinOneFormat { return nil }
        if isPreferred != other.isPreferred { return (.preferred, isPreferred) }
        if delivery.costRank != other.delivery.costRank { return (.cost, delivery.costRank < other.delivery.costRank) }
        let order = CameraFormatNegotiation.usableFourCCs
        let mine = order.firstIndex(of: fourcc.uppercased()) ?? order.count
        let theirs = order.firstIndex(of: other.fourcc.uppercased()) ?? order.count
        if mine != theirs { return (.cost, mine < theirs) }
        return nil
    }

    /// Strictly better; on a full tie the earlier (already chosen) candidate stays.
    func isBetter(than other: Candidate, withinOneFormat: Bool) -> Bool {
        decidingRule(against: other, withinOneFormat: withinOneFormat)?.selfWins ?? false
    }

    enum Rule { case rateReachable, size, rateDistance, preferred, cost }
}

/// Builds the one-line explanation of a choice.
struct Reason {
    var request: CameraFormatRequest
    var offers: [CameraFormatOffer]
    var winner: Candidate
    var others: [Candidate]

    var text: String {
        let fps = request.framesPerSecond
        var because: [String] = []
        // Size.
        if winner.size != request.size {
            let exactElsewhere = offers.contains { offer in
                CameraDelivery(fourcc: offer.fourcc) != nil
                    && offer.sizes.contains { $0.sizes.nearest(to: request.size) == request.size }
            }
            let which = winner.sizeClass == 1 ? "the smallest larger size" : "the largest smaller size"
            if exactElsewhere && winner.rate.reachability == .reaches {
                because.append("\(request.size) is not offered at \(fps) fps (\(winner.size) is \(which) that is)")
            } else {
                because.append("\(request.size) is not offered (\(winner.size) is \(which))")
            }
        }
        // Rate.
        switch winner.rate.reachability {
        case .reaches: break
        case .unlisted: because.append("the driver lists no frame rates, so \(fps) fps is asked for and read back")
        case .misses: because.append("\(fps) fps is not offered at \(winner.size) (nearest \(winner.rate.rate))")
        }
        // Format.
        let rivals = others.filter { $0.fourcc != winner.fourcc }
        if rivals.isEmpty {
            because.append("\(winner.fourcc) is the only usable format")
        } else {
            var phrases: [String] = []
            for rival in rivals {
                guard let (rule, _) = winner.decidingRule(against: rival, withinOneFormat: false) else { continue }
                let phrase: String
                switch rule {
                case .rateReachable:
                    phrase = rival.rate.reachability == .unlisted
                        ? "\(rival.fourcc) lists no frame rates"
                        : "\(rival.fourcc) gives only \(rival.rate.rate) fps at \(rival.size)"
                case .size:
                    if let slower = rate(of: rival.fourcc, at: winner.size), winner.rate.reachability == .reaches {
                        phrase = "\(rival.fourcc) gives \(winner.size) only at \(slower) fps"
                    } else {
                        phrase = "\(rival.fourcc)'s nearest size is \(rival.size)"
                    }
                case .rateDistance:
                    phrase = "\(rival.fourcc)'s nearest rate is \(rival.rate.rate) fps"
                case .preferred:
                    phrase = "\(winner.fourcc) is the preferred format"
                case .cost:
                    phrase = "\(winner.fourcc) \(winner.delivery.costPhrase)"
                }
                if !phrases.contains(phrase) { phrases.append(phrase) }
            }
            if let preferred = request.preferredFourCC, !winner.isPreferred,
               !offers.contains(where: { $0.fourcc.uppercased() == preferred.uppercased() }) {
                phrases.insert("preferred \(preferred) is not offered", at: 0)
            }
            because.append(contentsOf: phrases)
        }
        let decoded = winner.delivery == .mjpeg ? " (decoded to YU12)" : ""
        return "asked \(request); device offers \(Self.summary(offers)); chose \(winner.size) \(winner.fourcc) @\(winner.rate.rate)\(decoded)"
            + (because.isEmpty ? "" : " because " + Self.join(because))
    }

    /// The rate `fourcc` offers at `size`, if it offers that size at all.
    func rate(of fourcc: String, at size: FrameSize) -> FrameRate? {
        for offer in offers where offer.fourcc == fourcc {
            for entry in offer.sizes where entry.sizes.nearest(to: size) == size {
                return entry.rates.nearest(to: request.framesPerSecond).rate
            }
        }
        return nil
    }

    static func join(_ parts: [String]) -> String {
        parts.count <= 1 ? parts.joined() : parts.dropLast().joined(separator: ", ") + " and " + (parts.last ?? "")
    }

    /// "YUYV 640x480@30, 1280x720@10; MJPG 1280x720@30; unusable: RGB3, BA81".
    static func summary(_ offers: [CameraFormatOffer]) -> String {
        var groups: [String] = []
        var usable = offers.filter { CameraDelivery(fourcc: $0.fourcc) != nil }
        let unusable = offers.filter { CameraDelivery(fourcc: $0.fourcc) == nil }.map(\.fourcc)
        // Formats with identical size lists (vivid lists the same for all) are folded together.
        while let first = usable.first {
            let same = usable.filter { $0.sizes == first.sizes }
            usable.removeAll { $0.sizes == first.sizes }
            let names = same.map(\.fourcc).joined(separator: "/")
            let sizes = sizeList(first, limit: 6)
            groups.append(sizes.isEmpty ? names : "\(names) \(sizes)")
        }
        if !unusable.isEmpty {
            let shown = unusable.prefix(6).joined(separator: ", ")
            groups.append("unusable: " + shown + (unusable.count > 6 ? " and \(unusable.count - 6) more" : ""))
        }
        return groups.isEmpty ? "nothing" : groups.joined(separator: "; ")
    }

    /// "320x180@25/30/50/60, 640x360@25/30 …".
    static func sizeList(_ offer: CameraFormatOffer, limit: Int) -> String {
        let items = offer.sizes.prefix(limit).map { entry in
            entry.rates == .unknown ? entry.sizes.text : "\(entry.sizes.text)@\(entry.rates.text)"
        }
        return items.joined(separator: ", ") + (offer.sizes.count > limit ? " and \(offer.sizes.count - limit) more" : "")
    }
}
