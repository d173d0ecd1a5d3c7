import CLibXML2
import KioskCore

/// Reads a SOAP message (ONVIF requests, WS-Discovery probes) into a `SOAPElement` tree
/// with libxml2 (`xmlReadMemory`, no network, no entity substitution, no DTD loading),
/// namespaces resolved.
///
/// Refused before libxml2 sees it: more than `maximumBytes`, bytes that are not UTF-8 or
/// hold a NUL, any document type declaration (SOAP forbids them, SOAP 1.2 part 1 §5; they
/// are how entity expansion and external entities get in) and any processing instruction
/// but the XML declaration (SOAP forbids those too). Deeper than 32 elements or more than
/// 2,000 is refused while walking the tree. (Foundation's XMLParser was tried first:
/// Fuzz/FuzzONVIF made it trap on a non-UTF-8 name and crash on a processing instruction
/// without data — a daemon crash from one datagram — so this reads libxml2 directly.)
public enum SOAPParser {
    public static let maximumBytes = 64 * 1024
    static let maximumDepth = 32
    static let maximumElements = 2000

    private static let initialized: Void = { xmlInitParser() }()

    /// The document's root element, or why it is not one.
    public static func parse(_ bytes: [UInt8]) -> Result<SOAPElement, SOAPParseError> {
        guard bytes.count <= maximumBytes else { return .failure(SOAPParseError("the message is over \(maximumBytes / 1024) KiB")) }
        guard String(validating: bytes, as: UTF8.self) != nil, !bytes.contains(0) else {
            return .failure(SOAPParseError("the message is not UTF-8 text"))
        }
        guard !contains(bytes, "<!DOCTYPE"), !contains(bytes, "<!ENTITY") else {
            return .failure(SOAPParseError("a document type declaration (SOAP forbids them)"))
        }
        if let instruction = firstIndex(of: "<?", in: bytes, from: 0) {
            let declaration = Array("<?xml ".utf8)
            let leading = bytes[..<instruction].allSatisfy { $0 == 0x20 || $0 == 0x09 || $0 == 0x0A || $0 == 0x0D }
                || (instruction == 3 && bytes.starts(with: [0xEF, 0xBB, 0xBF]))
            guard leading, bytes.count >= instruction + declaration.count,
                  Array(bytes[instruction..<(instruction + declaration.count)]) == declaration,
                  firstIndex(of: "<?", in: bytes, from: instruction + 2) == nil else {
                return .failure(SOAPParseError("a processing instruction (SOAP forbids them)"))
            }
        }
        _ = initialized
        let options = Int32(XML_PARSE_NONET.rawValue | XML_PARSE_NOERROR.rawValue | XML_PARSE_NOWARNING.rawValue | XML_PARSE_NOCDATA.rawValue)
        let document = bytes.withUnsafeBufferPointer { buffer -> xmlDocPtr? in
            buffer.baseAddress.flatMap { base in
                base.withMemoryRebound(to: CChar.self, capacity: buffer.count) {
                    xmlReadMemory($0, Int32(buffer.count), "soap.xml", "UTF-8", options)
                }
            }
        }
        guard let document else { return .failure(SOAPParseError("not well-formed XML")) }
        defer { xmlFreeDoc(document) }
        guard let root = xmlDocGetRootElement(document) else { return .failure(SOAPParseError("no element")) }
        var count = 0
        guard let tree = element(root, depth: 0, count: &count) else {
            return .failure(SOAPParseError("more than \(maximumDepth) levels or \(maximumElements) elements"))
        }
        return .success(tree)
    }

    /// The element and what is below it; nil past the depth or element limits.
    private static func element(_ node: xmlNodePtr, depth: Int, count: inout Int) -> SOAPElement? {
        count += 1
        guard depth < maximumDepth, count <= maximumElements else { return nil }
        var result = SOAPElement(name: text(node.pointee.name), namespace: node.pointee.ns.map { text($0.pointee.href) } ?? "")
        var attribute = node.pointee.properties
        while let current = attribute {
            let value = current.pointee.children.map { text($0.pointee.content) } ?? ""
            result.attributes[text(current.pointee.name)] = value
            attribute = current.pointee.next
        }
        var child = node.pointee.children
        var body = ""
        while let current = child {
            switch current.pointee.type {
            case XML_ELEMENT_NODE:
                guard let converted = element(current, depth: depth + 1, count: &count) else { return nil }
                result.children.append(converted)
            case XML_TEXT_NODE, XML_CDATA_SECTION_NODE:
                if body.utf8.count < 16 * 1024 { body += text(current.pointee.content) }
            default:
                break
            }
            child = current.pointee.next
        }
        result.text = trimmed(body)
        return result
    }

    /// libxml2's NUL-terminated UTF-8 (xmlChar is an unsigned char).
    private static func text(_ pointer: UnsafePointer<xmlChar>?) -> String { pointer.map { String(cString: $0) } ?? "" }

    private static func text(_ pointer: UnsafeMutablePointer<xmlChar>?) -> String { text(UnsafePointer(pointer)) }

    private static func trimmed(_ text: String) -> String {
        let spaces: Set<Character> = [" ", "\t", "\n", "\r", "\r\n"]
        var slice = Substring(text)
        while let first = slice.first, spaces.contains(first) { slice = slice.dropFirst() }
        while let last = slice.last, spaces.contains(last) { slice = slice.dropLast() }
        return String(slice)
    }

    private static func contains(_ bytes: [UInt8], _ text: String) -> Bool {
        let needle = Array(text.utf8)
        guard bytes.count >= needle.count else { return false }
        for start in 0...(bytes.count - needle.count) where bytes[start] == needle[0] {
            if bytes[start..<(start + needle.count)].elementsEqual(needle, by: { a, b in
                a == b || (a >= 0x61 && a <= 0x7A && a - 0x20 == b)
            }) { return true }
        }
        return false
    }

    private static func firstIndex(of text: String, in bytes: [UInt8], from: Int) -> Int? {
        let needle = Array(text.utf8)
        guard bytes.count >= needle.count, from <= bytes.count - needle.count else { return nil }
        for start in from...(bytes.count - needle.count) where bytes[start] == needle[0] {
            if bytes[start..<(start + needle.count)].elementsEqual(needle) { return start }
        }
        return nil
    }
}

/// Why a message could not be read as SOAP.
public struct SOAPParseError: Error, Equatable, CustomStringConvertible {
    public let description: String
    init(_ description: String) { self.description = description }
}
