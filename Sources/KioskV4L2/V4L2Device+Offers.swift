import KioskCore

extension V4L2Device {
    /// What the device offers, in the form `CameraFormatNegotiation` takes.
    /// - Parameters:
    ///   - request: The size to be negotiated. A stepwise size range lists its rates at
    ///     the size the negotiation would pick from it (rates depend on the size, and a
    ///     range cannot be enumerated size by size); without a request, at its largest
    ///     size. A format whose driver lists no sizes gets the size VIDIOC_TRY_FMT turns
    ///     the request into.
    ///   - includeEmulated: Also libv4l2's software-converted formats (for `probe`).
    ///   - sizesOf: Which fourccs to enumerate sizes and rates for (the others are listed
    ///     by name only — vivid has 80-odd formats kioskcam cannot record anyway).
    /// - Throws: `V4L2Error` when enumeration fails (e.g. the camera was unplugged).
    public func formatOffers(for request: FrameSize? = nil, includeEmulated: Bool = false,
                             sizesOf: (String) -> Bool = { _ in true }) throws(V4L2Error) -> [CameraFormatOffer] {
        var offers: [CameraFormatOffer] = []
        for format in try formats() where includeEmulated || !format.emulated {
            guard sizesOf(format.fourcc) else {
                offers.append(CameraFormatOffer(fourcc: format.fourcc, description: format.description, sizes: []))
                continue
            }
            var entries: [CameraSizeOffer] = []
            for sizes in try frameSizes(format.fourcc) {
                let at: FrameSize?
                switch sizes {
                case .discrete(let size): at = size
                case .stepwise(_, let maximum, _): at = request.flatMap { sizes.nearest(to: $0) } ?? maximum
                }
                let rates = try at.map { size throws(V4L2Error) in try frameIntervals(format.fourcc, size: size) } ?? .unknown
                entries.append(CameraSizeOffer(sizes, rates: rates))
            }
            if entries.isEmpty, let request,
               let tried = try? setFormat(fourcc: format.fourcc, size: request, tryOnly: true),
               tried.fourcc == format.fourcc {
                let rates = (try? frameIntervals(format.fourcc, size: tried.size)) ?? .unknown
                entries.append(CameraSizeOffer(.discrete(tried.size), rates: rates))
            }
            offers.append(CameraFormatOffer(fourcc: format.fourcc, description: format.description, sizes: entries))
        }
        return offers
    }
}
