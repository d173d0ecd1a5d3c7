import Foundation

/// What ONVIF clients are told about the camera: the facts every answer is made from.
public struct ONVIFDevice: Sendable, Equatable {
    public struct Stream: Sendable, Equatable {
        /// The profile token: "main" or "sub".
        public var token: String
        public var width: Int
        public var height: Int
        public var framesPerSecond: Int
        public var bitrate: Int
        public var keyframeInterval: Int
        public var rtspURL: String

        public init(token: String, width: Int, height: Int, framesPerSecond: Int, bitrate: Int, keyframeInterval: Int, rtspURL: String) {
            self.token = token
            self.width = width
            self.height = height
            self.framesPerSecond = framesPerSecond
            self.bitrate = bitrate
            self.keyframeInterval = keyframeInterval
            self.rtspURL = rtspURL
        }
    }

    public var name: String
    public var firmwareVersion: String
    public var serialNumber: String
    /// `https://ADDRESS:PORT`: the web app, where `/onvif/…` and `/api/snapshot.jpg` are.
    public var baseURL: String
    public var streams: [Stream]
    public var interfaceName: String
    public var hardwareAddress: String
    public var ipv4Address: String
    public var ipv4PrefixLength: Int

    public init(name: String, firmwareVersion: String, serialNumber: String, baseURL: String, streams: [Stream],
                interfaceName: String = "eth0", hardwareAddress: String = "00:00:00:00:00:00", ipv4Address: String = "0.0.0.0",
                ipv4PrefixLength: Int = 24) {
        self.name = name
        self.firmwareVersion = firmwareVersion
        self.serialNumber = serialNumber
        self.baseURL = baseURL
        self.streams = streams
        self.interfaceName = interfaceName
        self.hardwareAddress = hardwareAddress
        self.ipv4Address = ipv4Address
        self.ipv4PrefixLength = ipv4PrefixLength
    }

    public var deviceServiceURL: String { baseURL + "/onvif/device_service" }
    public var mediaServiceURL: String { baseURL + "/onvif/media_service" }
    public var snapshotURL: String { baseURL + "/api/snapshot.jpg" }

    /// The WS-Discovery endpoint: a UUID URN made from the serial number (the device id),
    /// the same at every start.
    public var endpointReference: String {
        var bytes = Array(serialNumber.utf8)
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        var words: [UInt64] = []
        for round in 0..<2 {
            for byte in bytes + [UInt8(round)] { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3 }
            words.append(hash)
        }
        bytes = words.flatMap { word in (0..<8).map { UInt8(truncatingIfNeeded: word >> (8 * $0)) } }
        bytes[6] = (bytes[6] & 0x0F) | 0x50   // version 5 style (name-based)
        bytes[8] = (bytes[8] & 0x3F) | 0x80
        let hex = bytes.map { String($0, radix: 16).count == 1 ? "0" + String($0, radix: 16) : String($0, radix: 16) }.joined()
        let parts = [hex.prefix(8), hex.dropFirst(8).prefix(4), hex.dropFirst(12).prefix(4), hex.dropFirst(16).prefix(4), hex.dropFirst(20)]
        return "urn:uuid:" + parts.joined(separator: "-")
    }

    /// The scopes NVRs read the name and kind from.
    public var scopes: [String] {
        let name = name.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? "KioskCam"
        return ["onvif://www.onvif.org/type/video_encoder", "onvif://www.onvif.org/type/Network_Video_Transmitter",
                "onvif://www.onvif.org/Profile/Streaming", "onvif://www.onvif.org/hardware/KioskCam",
                "onvif://www.onvif.org/name/\(name)", "onvif://www.onvif.org/location/"]
    }
}

/// A WS-Security UsernameToken (OASIS UsernameToken Profile 1.0) from a request's header.
public struct ONVIFUsernameToken: Sendable, Equatable {
    public var user: String
    public var password: String
    /// PasswordDigest = Base64(SHA-1(nonce + created + password)); else PasswordText.
    public var isDigest: Bool
    public var nonce: [UInt8]
    public var created: String

    public init?(envelope: SOAPElement) {
        guard let token = envelope.path("Header", "Security", "UsernameToken"),
              let user = token.child("Username")?.text, WebUserName.isValid(user),
              let password = token.child("Password") else { return nil }
        self.user = user
        self.password = password.text
        isDigest = (password.attributes["Type"] ?? "").hasSuffix("#PasswordDigest")
        nonce = token.child("Nonce").flatMap { Data(base64Encoded: $0.text) }.map(Array.init) ?? []
        created = token.child("Created")?.text ?? ""
        guard self.password.utf8.count <= 1024, created.utf8.count <= 64, nonce.count <= 256 else { return nil }
    }

    /// Whether `created` is within five minutes of `now` (a digest is not replayed later).
    public func isFresh(now: Date) -> Bool {
        guard let date = ONVIFTime.parse(created) else { return false }
        return abs(date.timeIntervalSince(now)) <= 300
    }

    /// The digest a client with `password` would send, given SHA-1 (`sha1`).
    public func expectedDigest(password: String, sha1: ([UInt8]) -> [UInt8]) -> String {
        Data(sha1(nonce + Array(created.utf8) + Array(password.utf8))).base64EncodedString()
    }
}

/// `2026-11-28T19:00:00Z` and its variants (a fraction of a second, an offset for Z):
/// xs:dateTime with its zone, as clients write a UsernameToken's `Created`. Read by
/// arithmetic: Foundation's ISO 8601 formatter is ICU's calendar, whose code and zone
/// data (0.9 MiB) would stay resident in the daemon from an NVR's first request on.
public enum ONVIFTime {
    /// The instant `text` names, or nil: not exactly `YYYY-MM-DDTHH:MM:SS[.f…](Z|±HH:MM)`,
    /// or no such date or time of day (2026-02-30, 24:00:00).
    public static func parse(_ text: String) -> Date? {
        let bytes = Array(text.utf8)
        func digits(_ start: Int, _ count: Int) -> Int? {
            guard start >= 0, start + count <= bytes.count else { return nil }
            var value = 0
            for byte in bytes[start..<start + count] {
                guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return nil }
                value = value * 10 + Int(byte - UInt8(ascii: "0"))
            }
            return value
        }
        func byte(_ index: Int, is characters: String) -> Bool { index < bytes.count && characters.utf8.contains(bytes[index]) }
        guard let year = digits(0, 4), byte(4, is: "-"), let month = digits(5, 2), byte(7, is: "-"), let day = digits(8, 2),
              byte(10, is: "Tt"), let hour = digits(11, 2), byte(13, is: ":"), let minute = digits(14, 2), byte(16, is: ":"),
              let second = digits(17, 2), hour < 24, minute < 60, second < 60,
              let date = CalendarDate(year: year, month: month, day: day) else { return nil }
        var index = 19
        var fraction = 0.0
        if byte(index, is: ".") {
            var scale = 0.1
            index += 1
            let first = index
            while let digit = digits(index, 1) {
                fraction += Double(digit) * scale
                scale /= 10
                index += 1
            }
            guard index > first else { return nil }
        }
        var offsetSeconds = 0
        if byte(index, is: "Zz") {
            index += 1
        } else if byte(index, is: "+-"), let hours = digits(index + 1, 2), byte(index + 3, is: ":"), let minutes = digits(index + 4, 2),
                  hours < 24, minutes < 60 {
            offsetSeconds = (bytes[index] == UInt8(ascii: "-") ? -1 : 1) * (hours * 3600 + minutes * 60)
            index += 6
        } else {
            return nil
        }
        guard index == bytes.count else { return nil }
        let seconds = date.daysSince1970 * 86_400 + hour * 3600 + minute * 60 + second - offsetSeconds
        return Date(timeIntervalSince1970: Double(seconds) + fraction)
    }
}

/// The ONVIF Device and Media services (Profile S, the parts NVRs use to add a camera):
/// a request envelope in, the answer's HTTP status and SOAP envelope out. Pure: the
/// transport, the password check and the clock are the caller's.
public enum ONVIFService {
    public enum Endpoint: String, Sendable { case device, media }

    /// What a request asks and who asks it.
    public struct Request: Sendable, Equatable {
        public var operation: String
        public var body: SOAPElement
        public var token: ONVIFUsernameToken?
    }

    /// The operation a SOAP envelope carries, or a fault's answer.
    public static func request(_ envelope: SOAPElement) -> Result<Request, Answer> {
        guard envelope.name == "Envelope", envelope.namespace == Namespace.soap || envelope.namespace == Namespace.soap11 else {
            return .failure(fault(.sender, subcode: "ter:WellFormed", reason: "not a SOAP 1.2 envelope"))
        }
        guard let operation = envelope.child("Body")?.children.first else {
            return .failure(fault(.sender, subcode: "ter:WellFormed", reason: "the SOAP body is empty"))
        }
        return .success(Request(operation: operation.name, body: operation, token: ONVIFUsernameToken(envelope: envelope)))
    }

    /// Operations answered without a user: clients read the time first, to sign their
    /// tokens with the camera's clock (ONVIF Core §5.12.1).
    public static let unauthenticated: Set<String> = ["GetSystemDateAndTime"]

    public struct Answer: Error, Sendable, Equatable {
        public var status: Int
        public var xml: String
    }

    public enum FaultCode: String { case sender = "env:Sender", receiver = "env:Receiver" }

    /// The answer to an authenticated (or pre-authentication) request.
    public static func answer(_ request: Request, endpoint: Endpoint, device: ONVIFDevice, now: Date) -> Answer {
        let d = device
        let body: String
        switch (endpoint, request.operation) {
        case (_, "GetSystemDateAndTime"):
            let c = LocalTimestamp(unixSeconds: LocalZone.wholeSeconds(now), utcOffsetSeconds: 0)
            body = """
                <tds:GetSystemDateAndTimeResponse><tds:SystemDateAndTime><tt:DateTimeType>NTP</tt:DateTimeType>\
                <tt:DaylightSavings>false</tt:DaylightSavings><tt:TimeZone><tt:TZ>UTC0</tt:TZ></tt:TimeZone><tt:UTCDateTime>\
                <tt:Time><tt:Hour>\(c.hour)</tt:Hour><tt:Minute>\(c.minute)</tt:Minute><tt:Second>\(c.second)</tt:Second></tt:Time>\
                <tt:Date><tt:Year>\(c.year)</tt:Year><tt:Month>\(c.month)</tt:Month><tt:Day>\(c.day)</tt:Day></tt:Date>\
                </tt:UTCDateTime></tds:SystemDateAndTime></tds:GetSystemDateAndTimeResponse>
                """
        case (.device, "GetDeviceInformation"):
            body = """
                <tds:GetDeviceInformationResponse><tds:Manufacturer>KioskCam</tds:Manufacturer><tds:Model>KioskCam</tds:Model>\
                <tds:FirmwareVersion>\(x(d.firmwareVersion))</tds:FirmwareVersion><tds:SerialNumber>\(x(d.serialNumber))</tds:SerialNumber>\
                <tds:HardwareId>kioskcam</tds:HardwareId></tds:GetDeviceInformationResponse>
                """
        case (.device, "GetCapabilities"):
            body = """
                <tds:GetCapabilitiesResponse><tds:Capabilities><tt:Device><tt:XAddr>\(x(d.deviceServiceURL))</tt:XAddr></tt:Device>\
                <tt:Media><tt:XAddr>\(x(d.mediaServiceURL))</tt:XAddr><tt:StreamingCapabilities><tt:RTPMulticast>false</tt:RTPMulticast>\
                <tt:RTP_TCP>true</tt:RTP_TCP><tt:RTP_RTSP_TCP>true</tt:RTP_RTSP_TCP></tt:StreamingCapabilities></tt:Media>\
                </tds:Capabilities></tds:GetCapabilitiesResponse>
                """
        case (.device, "GetServices"):
            let services = [(Namespace.device, d.deviceServiceURL), (Namespace.media, d.mediaServiceURL)].map { namespace, address in
                "<tds:Service><tds:Namespace>\(namespace)</tds:Namespace><tds:XAddr>\(x(address))</tds:XAddr>"
                    + "<tds:Version><tt:Major>2</tt:Major><tt:Minor>60</tt:Minor></tds:Version></tds:Service>"
            }
            body = "<tds:GetServicesResponse>\(services.joined())</tds:GetServicesResponse>"
        case (.device, "GetScopes"):
            let scopes = d.scopes.map { "<tds:Scopes><tt:ScopeDef>Fixed</tt:ScopeDef><tt:ScopeItem>\(x($0))</tt:ScopeItem></tds:Scopes>" }
            body = "<tds:GetScopesResponse>\(scopes.joined())</tds:GetScopesResponse>"
        case (.device, "GetNetworkInterfaces"):
            body = """
                <tds:GetNetworkInterfacesResponse><tds:NetworkInterfaces token="\(x(d.interfaceName))"><tt:Enabled>true</tt:Enabled>\
                <tt:Info><tt:Name>\(x(d.interfaceName))</tt:Name><tt:HwAddress>\(x(d.hardwareAddress))</tt:HwAddress><tt:MTU>1500</tt:MTU></tt:Info>\
                <tt:IPv4><tt:Enabled>true</tt:Enabled><tt:Config><tt:FromDHCP><tt:Address>\(x(d.ipv4Address))</tt:Address>\
                <tt:PrefixLength>\(d.ipv4PrefixLength)</tt:PrefixLength></tt:FromDHCP><tt:DHCP>true</tt:DHCP></tt:Config></tt:IPv4>\
                </tds:NetworkInterfaces></tds:GetNetworkInterfacesResponse>
                """
        case (.device, "GetHostname"):
            body = "<tds:GetHostnameResponse><tds:HostnameInformation><tt:FromDHCP>false</tt:FromDHCP><tt:Name>\(x(d.name))</tt:Name></tds:HostnameInformation></tds:GetHostnameResponse>"
        case (.media, "GetProfiles"):
            body = "<trt:GetProfilesResponse>\(d.streams.map(profile).joined())</trt:GetProfilesResponse>"
        case (.media, "GetProfile"):
            guard let stream = stream(request, d) else { return noProfile(request) }
            body = "<trt:GetProfileResponse>\(profile(stream).replacingOccurrences(of: "trt:Profiles", with: "trt:Profile"))</trt:GetProfileResponse>"
        case (.media, "GetVideoSources"):
            let main = d.streams.first
            body = """
                <trt:GetVideoSourcesResponse><trt:VideoSources token="source"><tt:Framerate>\(main?.framesPerSecond ?? 0)</tt:Framerate>\
                <tt:Resolution><tt:Width>\(main?.width ?? 0)</tt:Width><tt:Height>\(main?.height ?? 0)</tt:Height></tt:Resolution>\
                </trt:VideoSources></trt:GetVideoSourcesResponse>
                """
        case (.media, "GetVideoEncoderConfigurations"):
            let configurations = d.streams.map { encoderConfiguration($0, element: "trt:Configurations") }
            body = "<trt:GetVideoEncoderConfigurationsResponse>\(configurations.joined())</trt:GetVideoEncoderConfigurationsResponse>"
        case (.media, "GetStreamUri"):
            guard let stream = stream(request, d) else { return noProfile(request) }
            body = "<trt:GetStreamUriResponse>\(mediaURI(stream.rtspURL))</trt:GetStreamUriResponse>"
        case (.media, "GetSnapshotUri"):
            guard stream(request, d) != nil else { return noProfile(request) }
            body = "<trt:GetSnapshotUriResponse>\(mediaURI(d.snapshotURL))</trt:GetSnapshotUriResponse>"
        default:
            return fault(.receiver, subcode: "ter:ActionNotSupported",
                         reason: "\(request.operation.prefix(64)) is not served by this camera's \(endpoint.rawValue) service")
        }
        return Answer(status: 200, xml: envelope(body))
    }

    /// A SOAP fault (`ter:NotAuthorized`, `ter:WellFormed` …): 400 for the sender's
    /// mistakes, 500 for what the camera cannot do.
    public static func fault(_ code: FaultCode, subcode: String, reason: String) -> Answer {
        let body = """
            <env:Fault><env:Code><env:Value>\(code.rawValue)</env:Value><env:Subcode><env:Value>\(x(subcode))</env:Value></env:Subcode>\
            </env:Code><env:Reason><env:Text xml:lang="en">\(x(reason))</env:Text></env:Reason></env:Fault>
            """
        return Answer(status: code == .sender ? 400 : 500, xml: envelope(body))
    }

    public enum Namespace {
        public static let soap = "http://www.w3.org/2003/05/soap-envelope"
        public static let soap11 = "http://schemas.xmlsoap.org/soap/envelope/"
        public static let device = "http://www.onvif.org/ver10/device/wsdl"
        public static let media = "http://www.onvif.org/ver10/media/wsdl"
        public static let schema = "http://www.onvif.org/ver10/schema"
        public static let error = "http://www.onvif.org/ver10/error"
    }

    static func envelope(_ body: String) -> String {
        """
        <?xml version="1.0" encoding="UTF-8"?>
        <env:Envelope xmlns:env="\(Namespace.soap)" xmlns:tds="\(Namespace.device)" xmlns:trt="\(Namespace.media)" \
        xmlns:tt="\(Namespace.schema)" xmlns:ter="\(Namespace.error)"><env:Body>\(body)</env:Body></env:Envelope>
        """
    }

    private static func x(_ text: String) -> String { XMLText.escape(text) }

    private static func stream(_ request: Request, _ device: ONVIFDevice) -> ONVIFDevice.Stream? {
        let token = request.body.child("ProfileToken")?.text ?? ""
        return device.streams.first { $0.token == token }
    }

    private static func noProfile(_ request: Request) -> Answer {
        fault(.sender, subcode: "ter:NoProfile", reason: "no profile \"\((request.body.child("ProfileToken")?.text ?? "").prefix(64))\"; the profiles are main and sub")
    }

    private static func mediaURI(_ uri: String) -> String {
        "<trt:MediaUri><tt:Uri>\(x(uri))</tt:Uri><tt:InvalidAfterConnect>false</tt:InvalidAfterConnect>"
            + "<tt:InvalidAfterReboot>false</tt:InvalidAfterReboot><tt:Timeout>PT0S</tt:Timeout></trt:MediaUri>"
    }

    private static func profile(_ stream: ONVIFDevice.Stream) -> String {
        let main = stream.token == "main"
        return """
            <trt:Profiles token="\(x(stream.token))" fixed="true"><tt:Name>\(main ? "Main stream" : "Sub-stream")</tt:Name>\
            <tt:VideoSourceConfiguration token="source-config"><tt:Name>Camera</tt:Name><tt:UseCount>\(1)</tt:UseCount>\
            <tt:SourceToken>source</tt:SourceToken><tt:Bounds x="0" y="0" width="\(stream.width)" height="\(stream.height)"/>\
            </tt:VideoSourceConfiguration>\(encoderConfiguration(stream, element: "tt:VideoEncoderConfiguration"))</trt:Profiles>
            """
    }

    private static func encoderConfiguration(_ stream: ONVIFDevice.Stream, element: String) -> String {
        """
        <\(element) token="encoder-\(x(stream.token))"><tt:Name>H.264 \(stream.width)x\(stream.height)</tt:Name><tt:UseCount>1</tt:UseCount>\
        <tt:Encoding>H264</tt:Encoding><tt:Resolution><tt:Width>\(stream.width)</tt:Width><tt:Height>\(stream.height)</tt:Height></tt:Resolution>\
        <tt:Quality>5</tt:Quality><tt:RateControl><tt:FrameRateLimit>\(stream.framesPerSecond)</tt:FrameRateLimit>\
        <tt:EncodingInterval>1</tt:EncodingInterval><tt:BitrateLimit>\(stream.bitrate / 1000)</tt:BitrateLimit></tt:RateControl>\
        <tt:H264><tt:GovLength>\(stream.keyframeInterval)</tt:GovLength><tt:H264Profile>High</tt:H264Profile></tt:H264>\
        <tt:Multicast><tt:Address><tt:Type>IPv4</tt:Type><tt:IPv4Address>0.0.0.0</tt:IPv4Address></tt:Address><tt:Port>0</tt:Port>\
        <tt:TTL>0</tt:TTL><tt:AutoStart>false</tt:AutoStart></tt:Multicast><tt:SessionTimeout>PT60S</tt:SessionTimeout></\(element)>
        """
    }
}
