import CMosquitto
import Glibc

/// One libmosquitto client driven by its owner's poll loop: the owner polls `socket`,
/// calls `read()`/`write()`/`housekeeping()`, and receives what happened through
/// `onEvent`, on the same thread, from inside those calls. Not thread-safe: one owner.
public final class MQTTClient {
    public enum Event {
        /// CONNACK arrived: 0 is accepted, anything else a refusal (`connackDescription`).
        case connected(code: Int32)
        case disconnected(code: Int32)
        case message(topic: String, payload: [UInt8], retained: Bool)
        /// A QoS 1 message was acknowledged (a QoS 0 one was sent).
        case published(messageID: Int32)
    }

    private let handle: OpaquePointer
    private let sink: EventSink

    /// - Throws: `MQTTError` when libmosquitto cannot make a client (out of memory).
    public init(clientID: String, onEvent: @escaping (Event) -> Void) throws(MQTTError) {
        _ = Self.libraryInitialised
        let sink = EventSink(onEvent)
        guard let handle = mosquitto_new(clientID, true, Unmanaged.passUnretained(sink).toOpaque()) else {
            throw MQTTError("mosquitto_new", code: MOSQ_ERR_NOMEM.rawValue)
        }
        self.handle = handle
        self.sink = sink
        mosquitto_connect_callback_set(handle) { _, context, code in
            EventSink.from(context)?.onEvent(.connected(code: code))
        }
        mosquitto_disconnect_callback_set(handle) { _, context, code in
            EventSink.from(context)?.onEvent(.disconnected(code: code))
        }
        mosquitto_publish_callback_set(handle) { _, context, messageID in
            EventSink.from(context)?.onEvent(.published(messageID: messageID))
        }
        mosquitto_message_callback_set(handle) { _, context, message in
            guard let sink = EventSink.from(context), let message = message?.pointee, let topic = message.topic else { return }
            let length = Int(max(0, message.payloadlen))
            var payload: [UInt8] = []
            if length > 0, let bytes = message.payload {
                payload = Array(UnsafeRawBufferPointer(start: bytes, count: length))
            }
            sink.onEvent(.message(topic: String(cString: topic), payload: payload, retained: message.retain))
        }
    }

    deinit {
        mosquitto_destroy(handle)
    }

    private static let libraryInitialised: Void = { _ = mosquitto_lib_init() }()

    /// The message the broker publishes for us if we vanish without saying goodbye.
    public func setWill(topic: String, payload: [UInt8], qos: Int32, retained: Bool) throws(MQTTError) {
        let code = payload.withUnsafeBytes { mosquitto_will_set(handle, topic, Int32($0.count), $0.baseAddress, qos, retained) }
        try check("setting the last will on \(topic)", code)
    }

    public func setCredentials(username: String, password: String?) throws(MQTTError) {
        try check("setting the user name", mosquitto_username_pw_set(handle, username, password))
    }

    /// TLS against `caFile`, or the system's certificates when nil.
    public func setTLS(caFile: String?) throws(MQTTError) {
        let code = mosquitto_tls_set(handle, caFile, caFile == nil ? "/etc/ssl/certs" : nil, nil, nil, nil)
        try check("setting up TLS with \(caFile ?? "/etc/ssl/certs")", code)
    }

    /// Opens the TCP (or TLS) connection and sends CONNECT; `.connected` follows from
    /// `read()` once the broker answers. Blocks for the TCP connection only.
    public func connect(host: String, port: Int, keepAliveSeconds: Int) throws(MQTTError) {
        try check("connecting to \(host):\(port)", mosquitto_connect(handle, host, Int32(clamping: port), Int32(clamping: keepAliveSeconds)))
    }

    /// Sends DISCONNECT (the broker then does not publish the will).
    public func disconnect() {
        _ = mosquitto_disconnect(handle)
    }

    /// The connection's socket, or -1 while there is none.
    public var socket: Int32 { mosquitto_socket(handle) }

    /// Whether libmosquitto has bytes waiting to be written (poll for POLLOUT).
    public var wantsWrite: Bool { mosquitto_want_write(handle) }

    public func read() throws(MQTTError) { try check("reading from the broker", mosquitto_loop_read(handle, 1)) }

    public func write() throws(MQTTError) { try check("writing to the broker", mosquitto_loop_write(handle, 1)) }

    /// Keep-alive pings and retries; call at least once a second.
    public func housekeeping() throws(MQTTError) { try check("keeping the connection alive", mosquitto_loop_misc(handle)) }

    /// Queues a message; returns its id (matched by `.published`).
    @discardableResult
    public func publish(topic: String, payload: [UInt8], qos: Int32, retained: Bool) throws(MQTTError) -> Int32 {
        var messageID: Int32 = 0
        guard payload.count <= Int(Int32.max) else { throw MQTTError("publishing on \(topic)", code: MOSQ_ERR_PAYLOAD_SIZE.rawValue) }
        let code = payload.withUnsafeBytes { mosquitto_publish(handle, &messageID, topic, Int32($0.count), $0.baseAddress, qos, retained) }
        try check("publishing on \(topic)", code)
        return messageID
    }

    public func subscribe(_ filter: String, qos: Int32) throws(MQTTError) {
        try check("subscribing to \(filter)", mosquitto_subscribe(handle, nil, filter, qos))
    }

    private func check(_ operation: String, _ code: Int32) throws(MQTTError) {
        guard code == MOSQ_ERR_SUCCESS.rawValue else { throw MQTTError(operation, code: code) }
    }
}

/// The closure the C callbacks reach through libmosquitto's user pointer; the client
/// holds it for as long as the handle lives.
private final class EventSink {
    let onEvent: (MQTTClient.Event) -> Void

    init(_ onEvent: @escaping (MQTTClient.Event) -> Void) { self.onEvent = onEvent }

    static func from(_ context: UnsafeMutableRawPointer?) -> EventSink? {
        context.map { Unmanaged<EventSink>.fromOpaque($0).takeUnretainedValue() }
    }
}
