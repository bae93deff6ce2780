/// Reads a template's tags the way swift-mustache's parser finds them, for two things the
/// engine does not give us: the section a syntax error is about (it reports *that* a section
/// is unterminated, not *which*), and how deeply the parser will recurse — it recurses once per
/// nested section and once per nested transform, and a layout-sized template of nothing but
/// `{{#a}}` overflows the stack.
///
/// Tags are found exactly as the parser finds them, delimiter changes (`{{=<% %>=}}`) included,
/// so a template cannot hide nesting from this scan. Like the parser, a change made inside a
/// section lasts until that section ends: the parser reads each section with its own copy of
/// the delimiters.
struct MustacheTagScan {
    enum Problem: Equatable {
        /// `name` includes its sigil, e.g. `#items`.
        case unterminated(String)
        /// A closing tag `/name` that does not match the innermost open section, if any.
        case strayClose(String, open: String?)
    }

    /// The first section problem; nil when the sections nest correctly.
    private(set) var problem: Problem?
    /// The most sections open at once.
    private(set) var deepestSectionNesting = 0
    /// The most transforms applied in one tag (`{{a(b(c))}}` has two).
    private(set) var deepestTransformNesting = 0

    init(_ template: String) {
        var start = "{{"
        var end = "}}"
        /// Open sections, each with the delimiters that were in effect where it began.
        var open: [(name: String, start: String, end: String)] = []
        var rest = Substring(template)
        while let opening = rest.firstRange(of: start) {
            rest = rest[opening.upperBound...]
            guard let sigil = rest.first else { break }
            if sigil == "=" {
                // Past a malformed change the parser gives up, so there is nothing more to read.
                guard let change = Self.delimiterChange(rest.dropFirst(), end: end) else { break }
                (start, end, rest) = change
                continue
            }
            guard let closing = rest.firstRange(of: end) else { break }
            let tag = rest[..<closing.lowerBound]
            rest = rest[closing.upperBound...]
            guard sigil != "!" else { continue }
            deepestTransformNesting = max(deepestTransformNesting, tag.count { $0 == "(" })
            let name = String(tag.dropFirst().trimmingWhitespace())
            switch sigil {
            case "#", "^", "$", "<":
                open.append((name: "\(sigil)\(name)", start: start, end: end))
                deepestSectionNesting = max(deepestSectionNesting, open.count)
            case "/":
                guard let innermost = open.last, innermost.name.dropFirst() == name else {
                    // The parser stops at a stray close, and so does the scan.
                    problem = .strayClose(name, open: open.last?.name)
                    return
                }
                open.removeLast()
                // A delimiter change inside the section ends with it.
                (start, end) = (innermost.start, innermost.end)
            default:
                continue
            }
        }
        if let innermost = open.last { problem = .unterminated(innermost.name) }
    }

    /// Mirrors the parser's reading of `{{=start end=}}`; nil where the parser would fail.
    private static func delimiterChange(_ text: Substring, end: String) -> (start: String, end: String, rest: Substring)? {
        var rest = text.drop(while: \.isWhitespace)
        let newStart = rest.prefix { !$0.isWhitespace }
        rest = rest.dropFirst(newStart.count).drop(while: \.isWhitespace)
        let newEnd = rest.prefix { $0 != "=" && !$0.isWhitespace }
        rest = rest.dropFirst(newEnd.count).drop(while: \.isWhitespace)
        guard !newStart.isEmpty, !newEnd.isEmpty, rest.first == "=", rest.dropFirst().hasPrefix(end) else { return nil }
        return (String(newStart), String(newEnd), rest.dropFirst(1 + end.count))
    }
}
