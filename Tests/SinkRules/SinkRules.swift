#if canImport(FoundationXML)
import FoundationXML
#endif
import Foundation
import OrderedJSON
public import IslandPresenter
import OrderedCollections

/// What each sink must never let producer text do (DESIGN.md §6, Untrusted text), checked on
/// what the sink writes: one statement of the rules for the unit tests and the
/// `fuzz-presenter` target. Each returns the broken rule, or nil.
public enum SinkRules {
    /// C0 (ESC among them), DEL and C1: written here rather than taken from the code under test.
    public static func isControl(_ scalar: Unicode.Scalar) -> Bool {
        scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value)
    }

    public static func violation(bar line: String, _ format: BarFormat) -> String? {
        if line.unicodeScalars.contains(where: isControl) { return "a control character" }
        switch format {
        case .waybar:
            guard let object = (try? JSONParser.parse(Array(line.utf8)))?.objectValue else { return "not a JSON object" }
            for key in ["text", "alt", "tooltip"] {
                guard let text = object[key]?.stringValue else { return "no \(key)" }
                if let problem = pangoViolation(text) { return "\(key): \(problem)" }
            }
            return nil
        case .i3blocks:
            guard let object = (try? JSONParser.parse(Array(line.utf8)))?.objectValue else { return "not a JSON object" }
            return object["markup"]?.stringValue == "none" ? nil : "markup is not none"
        case .polybar:
            // Whatever the module's label puts around the text: a `%` before, a `{` after.
            return !line.isEmpty && ("%" + line + "{").contains("%{") ? "%{ forms a formatting tag" : nil
        case .eww:
            return nil
        }
    }

    /// Pango markup that is text only: no tag, and `&` only in the three entities.
    public static func pangoViolation(_ text: String) -> String? {
        if text.contains("<") || text.contains(">") { return "a tag" }
        var rest = Substring(text)
        while let ampersand = rest.firstIndex(of: "&") {
            let after = rest[ampersand...]
            guard after.hasPrefix("&amp;") || after.hasPrefix("&lt;") || after.hasPrefix("&gt;") else { return "a bare &" }
            rest = rest[rest.index(after: ampersand)...]
        }
        return nil
    }

    /// Well-formed, finite, and safe to write to a terminal (`snapshot --svg -`).
    public static func violation(svg document: String) -> String? {
        if document.unicodeScalars.contains(where: { isControl($0) && $0 != "\n" }) { return "a control character" }
        return NumericAttributes.problem(in: document)
    }

    /// Terminal output holding no control character but the presenter's own CSI sequences:
    /// ESC [ parameters and a final byte among those it writes (cursor position, erase, SGR,
    /// modes).
    public static func violation(terminal output: String) -> String? {
        var scalars = output.unicodeScalars.makeIterator()
        while let scalar = scalars.next() {
            guard isControl(scalar) else { continue }
            guard scalar == "\u{1B}", scalars.next() == "[" else { return "control U+\(String(scalar.value, radix: 16))" }
            while let next = scalars.next() {
                if ("0"..."9").contains(next) || next == ";" || next == "?" { continue }
                if !"HKmJhl".unicodeScalars.contains(next) { return "a foreign escape sequence" }
                break
            }
        }
        return nil
    }
}

/// The attributes of an SVG that hold numbers; none may be `nan` or `inf`.
final class NumericAttributes: NSObject, XMLParserDelegate {
    static let names: Set<String> = ["x", "y", "width", "height", "cx", "cy", "r", "rx", "d", "viewBox", "font-size",
                                     "fill-opacity", "stroke-width", "stroke-opacity"]
    var bad: [String] = []

    func parser(_ parser: XMLParser, didStartElement name: String, namespaceURI: String?, qualifiedName: String?,
                attributes: [String: String] = [:]) {
        for (key, value) in attributes where Self.names.contains(key) {
            let lower = value.lowercased()
            if lower.contains("nan") || lower.contains("inf") { bad.append("\(name) \(key)=\"\(value)\"") }
        }
    }

    /// Nil when the document is well-formed XML whose numbers are all finite; else what is wrong.
    static func problem(in document: String) -> String? {
        let parser = XMLParser(data: Data(document.utf8))
        let delegate = NumericAttributes()
        parser.delegate = delegate
        guard parser.parse() else { return "not well-formed XML: \(String(describing: parser.parserError))" }
        return delegate.bad.isEmpty ? nil : "numbers that are not finite: \(delegate.bad)"
    }
}
