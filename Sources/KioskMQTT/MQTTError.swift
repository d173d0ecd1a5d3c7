import CMosquitto
import Glibc

/// A libmosquitto failure: the call, libmosquitto's code and its words for it (for a
/// lost connection or a refused login, what to check).
public struct MQTTError: Error, Sendable, Equatable, CustomStringConvertible {
    public let operation: String
    public let code: Int32
    public let message: String

    init(_ operation: String, code: Int32) {
        self.operation = operation
        self.code = code
        if code == MOSQ_ERR_ERRNO.rawValue {
            message = String(cString: strerror(errno))
        } else {
            message = String(cString: mosquitto_strerror(code))
        }
    }

    public var description: String {
        var text = "\(operation): \(message)"
        switch code {
        case MOSQ_ERR_AUTH.rawValue:
            text += " (check mqtt.username and the file mqtt.password_file names)"
        case MOSQ_ERR_TLS.rawValue:
            text += " (check mqtt.ca_file and that the broker's certificate names the host in mqtt.url)"
        case MOSQ_ERR_ERRNO.rawValue, MOSQ_ERR_NO_CONN.rawValue, MOSQ_ERR_CONN_LOST.rawValue:
            text += " (is the broker in mqtt.url running and reachable?)"
        default:
            break
        }
        return text
    }

    /// The connection is gone and must be made again.
    public var lostConnection: Bool {
        [MOSQ_ERR_NO_CONN.rawValue, MOSQ_ERR_CONN_LOST.rawValue, MOSQ_ERR_ERRNO.rawValue, MOSQ_ERR_PROTOCOL.rawValue,
         MOSQ_ERR_KEEPALIVE.rawValue, MOSQ_ERR_TLS.rawValue, MOSQ_ERR_AUTH.rawValue, MOSQ_ERR_CONN_REFUSED.rawValue]
            .contains(code)
    }
}

/// Words for a CONNACK code the broker refused us with.
public func connackDescription(_ code: Int32) -> String {
    String(cString: mosquitto_connack_string(code))
}
