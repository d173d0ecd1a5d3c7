import Foundation
#if canImport(FoundationXML)
import FoundationXML
#endif
import KioskCore

/// Reads a SOAP message (ONVIF requests, WS-Discovery probes) into a `SOAPElement` tree with
/// a real XML parser (Foundation's, on libxml2), namespaces resolved.
///
/// Refused before parsing: more than `maximumBytes`, and any document type declaration —
/// SOAP forbids them (SOAP 1.2 part 1 §5), and they are how entity expansion and
/// external entities get in. Deeper than 32 elements or more than 2,000 is refused too.
public enum SOAPParser {
    public static let maximumBytes = 64 * 1024

    /// The document's root element, or why it is not one.
    public static func parse(_ bytes: [UInt8]) -> Result<SOAPElement, SOAPParseError> {
        guard bytes.count <= maximumBytes else { return .failure(SOAPParseError("the message is over \(maximumBytes / 1024) KiB")) }
        guard !contains(bytes, "<!DOCTYPE"), !contains(bytes, "<!ENTITY") else {
            return .failure(SOAPParseError("a document type declaration (SOAP forbids them)"))
        }
        let builder = TreeBuilder()
        let parser = XMLParser(data: Data(bytes))
        parser.shouldProcessNamespaces = true
        parser.shouldResolveExternalEntities = false
        parser.delegate = builder
        guard parser.parse(), builder.failure == nil, let root = builder.root else {
            let reason = builder.failure ?? parser.parserError.map { "not well-formed XML (\(($0 as NSError).code))" } ?? "no element"
            return .failure(SOAPParseError(reason))
        }
        return .success(root)
    }

    private static func contains(_ bytes: [UInt8], _ text: String) -> Bool {
        let needle = Array(text.utf8)
        guard bytes.count >= needle.count else { return false }
        for start in 0...(bytes.count - needle.count) where bytes[start] == needle[0] {
            if Array(bytes[start..<(start + needle.count)]).elementsEqual(needle, by: { a, b in
                a == b || (a >= 0x61 && a <= 0x7A && a - 0x20 == b)
            }) { return true }
        }
        return false
    }

    private final class TreeBuilder: NSObject, XMLParserDelegate {
        var stack: [SOAPElement] = []
        var root: SOAPElement?
        var failure: String?
        var count = 0

        func parser(_ parser: XMLParser, didStartElement name: String, namespaceURI: String?, qualifiedName: String?,
                    attributes: [String: String] = [:]) {
            count += 1
            guard stack.count < 32, count <= 2000 else {
                failure = "more than 32 levels or 2,000 elements"
                parser.abortParsing()
                return
            }
            let local = name.split(separator: ":").last.map(String.init) ?? name
            stack.append(SOAPElement(name: local, namespace: namespaceURI ?? "", attributes: attributes))
        }

        func parser(_ parser: XMLParser, foundCharacters string: String) {
            guard !stack.isEmpty, stack[stack.count - 1].text.utf8.count < 16 * 1024 else { return }
            stack[stack.count - 1].text += string
        }

        func parser(_ parser: XMLParser, didEndElement name: String, namespaceURI: String?, qualifiedName: String?) {
            guard var element = stack.popLast() else { return }
            element.text = element.text.trimmingCharacters(in: .whitespacesAndNewlines)
            if stack.isEmpty { root = element } else { stack[stack.count - 1].children.append(element) }
        }

        func parser(_ parser: XMLParser, resolveExternalEntityName name: String, systemID: String?) -> Data? { nil }
    }
}

/// Why a message could not be read as SOAP.
public struct SOAPParseError: Error, Equatable, CustomStringConvertible {
    public let description: String
    init(_ description: String) { self.description = description }
}
