/// One XML element of a SOAP message: its local name and namespace, attributes, text and
/// children — what `SOAPParser` (KioskSOAP, on libxml2) hands the ONVIF
/// rules here, so that they stay pure and testable without a parser.
public struct SOAPElement: Sendable, Equatable {
    public var name: String
    public var namespace: String
    public var attributes: [String: String]
    public var text: String
    public var children: [SOAPElement]

    public init(name: String, namespace: String = "", attributes: [String: String] = [:], text: String = "", children: [SOAPElement] = []) {
        self.name = name
        self.namespace = namespace
        self.attributes = attributes
        self.text = text
        self.children = children
    }

    /// The first child called `name` (any namespace).
    public func child(_ name: String) -> SOAPElement? { children.first { $0.name == name } }

    /// The first element down a path of names: `path("Header", "Security", "UsernameToken")`.
    public func path(_ names: String...) -> SOAPElement? {
        var current: SOAPElement? = self
        for name in names { current = current?.child(name) }
        return current
    }

    /// The first element called `name` anywhere below (depth first).
    public func descendant(_ name: String) -> SOAPElement? {
        for child in children {
            if child.name == name { return child }
            if let found = child.descendant(name) { return found }
        }
        return nil
    }
}

/// Text for XML: `&`, `<`, `>`, `"` and `'` escaped, and characters XML 1.0 cannot carry dropped.
public enum XMLText {
    public static func escape(_ text: String) -> String {
        var out = ""
        out.reserveCapacity(text.utf8.count)
        for scalar in text.unicodeScalars {
            switch scalar {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&apos;"
            default:
                let value = scalar.value
                if value == 0x9 || value == 0xA || value == 0xD || (0x20...0xD7FF).contains(value) || (0xE000...0xFFFD).contains(value)
                    || (0x10000...0x10FFFF).contains(value) {
                    out.unicodeScalars.append(scalar)
                }
            }
        }
        return out
    }
}
