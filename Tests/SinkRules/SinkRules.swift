#if canImport(FoundationXML)
import FoundationXML
#endif
import Foundation
import OrderedJSON
package import IslandPresenter
import OrderedCollections

/// What each sink must never let producer text do (docs/design.md §6), checked on
/// what the sink writes: one statement of the rules for the unit tests and the
/// `fuzz-presenter` target. Each returns the broken rule, or nil.
package enum SinkRules {
    /// C0 (ESC among them), DEL and C1: written here rather than taken from the code under test.
    package static func isControl(_ scalar: Unicode.Scalar) -> Bool {
        scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value)
    }

    package static func violation(bar line: String, _ format: BarFormat) -> String? {
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
    package static func pangoViolation(_ text: String) -> String? {
        if text.contains("<") || text.contains(">") { return "a tag" }
        var rest = Substring(text)
        while let ampersand = rest.firstIndex(of: "&") {
            let after = rest[ampersand...]
            guard after.hasPrefix("&amp;") || after.hasPrefix("&lt;") || after.hasPrefix("&gt;") else { return "a bare &" }
            rest = rest[rest.index(after: ampersand)...]
        }
        return nil
    }

    /// Well-formed, finite, and safe to write to a terminal (`snapshot --svg -`); text only in
    /// the one `<title>` and `<desc>` (the drawing's glyphs are outlines), and no element or
    /// attribute a producer could have named: only what cairo writes.
    package static func violation(svg document: String) -> String? {
        if document.unicodeScalars.contains(where: { isControl($0) && $0 != "\n" }) { return "a control character" }
        return SVGStructure.problem(in: document)
    }

    /// Terminal output holding no control character but the presenter's own CSI sequences:
    /// ESC [ parameters and a final byte among those it writes (cursor position, erase, SGR,
    /// modes).
    package static func violation(terminal output: String) -> String? {
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

/// What an SVG of the snapshot may hold: cairo's elements and attributes, numbers that are all
/// finite, and character data only in one `<title>` and one `<desc>`, children of the root.
final class SVGStructure: NSObject, XMLParserDelegate {
    /// What cairo's SVG surface writes (1.16 and later), and the title and description.
    static let elements: Set<String> = [
        "svg", "title", "desc", "defs", "g", "symbol", "path", "use", "clipPath", "rect", "image",
        "mask", "pattern", "linearGradient", "radialGradient", "stop", "filter", "feColorMatrix",
        "feComposite", "feFlood", "feImage", "feOffset",
    ]
    static let attributes: Set<String> = [
        "xmlns", "xmlns:xlink", "width", "height", "viewBox", "version", "id", "x", "y", "d", "style",
        "transform", "clip-path", "clip-rule", "fill", "fill-rule", "fill-opacity", "stroke",
        "stroke-width", "stroke-linecap", "stroke-linejoin", "stroke-miterlimit", "stroke-opacity",
        "stroke-dasharray", "stroke-dashoffset", "opacity", "overflow", "xlink:href", "href",
        "mask", "filter", "patternUnits", "patternTransform", "gradientUnits", "gradientTransform",
        "x1", "y1", "x2", "y2", "cx", "cy", "r", "fx", "fy", "fr", "spreadMethod", "offset",
        "stop-color", "stop-opacity", "preserveAspectRatio", "color-interpolation-filters", "in",
        "in2", "result", "type", "values", "operator", "mode", "flood-color", "flood-opacity",
        "dx", "dy", "filterUnits", "maskUnits", "maskContentUnits", "clipPathUnits", "xml:space",
        "rx", "ry",
    ]
    /// The attributes that hold numbers; none may be `nan` or `inf`.
    static let numeric: Set<String> = [
        "x", "y", "width", "height", "cx", "cy", "r", "rx", "ry", "d", "viewBox", "transform", "style",
        "fill-opacity", "stroke-width", "stroke-opacity", "opacity", "offset",
    ]
    var bad: [String] = []
    var path: [String] = []
    var textParents: [String] = []

    func parser(
        _ parser: XMLParser, didStartElement name: String, namespaceURI: String?, qualifiedName: String?,
        attributes: [String: String] = [:]
    ) {
        if !Self.elements.contains(name) { bad.append("an element <\(name.prefix(40))>") }
        if name == "title" || name == "desc" {
            if path != ["svg"] { bad.append("<\(name)> outside the root") }
            if textParents.contains(name) { bad.append("a second <\(name)>") }
            textParents.append(name)
        }
        for (key, value) in attributes {
            if !Self.attributes.contains(key) { bad.append("an attribute \(key.prefix(40)) on <\(name)>") }
            let lower = value.lowercased()
            if Self.numeric.contains(key), lower.contains("nan") || lower.contains("inf") { bad.append("\(name) \(key)=\"\(value)\"") }
        }
        path.append(name)
    }

    func parser(_ parser: XMLParser, didEndElement name: String, namespaceURI: String?, qualifiedName: String?) {
        path.removeLast()
    }

    func parser(_ parser: XMLParser, foundCharacters string: String) {
        let inside = path.last == "title" || path.last == "desc"
        if !inside, !string.allSatisfy(\.isWhitespace) { bad.append("text outside <title> and <desc> in <\(path.last ?? "")>") }
        if inside, path.count != 2 { bad.append("text in a nested element") }
    }

    func parser(_ parser: XMLParser, foundCDATA block: Data) { bad.append("a CDATA section") }
    func parser(_ parser: XMLParser, foundComment comment: String) { bad.append("a comment") }
    func parser(_ parser: XMLParser, foundProcessingInstructionWithTarget target: String, data: String?) {
        bad.append("a processing instruction \(target.prefix(40))")
    }

    /// Nil when the document is well-formed XML of that shape; else what is wrong.
    static func problem(in document: String) -> String? {
        let parser = XMLParser(data: Data(document.utf8))
        let delegate = SVGStructure()
        parser.delegate = delegate
        guard parser.parse() else { return "not well-formed XML: \(String(describing: parser.parserError))" }
        return delegate.bad.isEmpty ? nil : "\(delegate.bad.prefix(5))"
    }
}
