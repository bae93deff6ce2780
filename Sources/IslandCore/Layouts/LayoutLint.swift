package import OrderedJSON
import OrderedCollections

/// What a valid layout probably gets wrong: a measure that can never render to a number
/// (`"value": "40%"`: the bar never fills), and a template that names a state key the sample
/// state lacks (`{{state.percnt}}`: it renders as nothing). Warnings, never refusals: a layout
/// may well name a key its activities only sometimes have.
///
/// Pure and bounded by the layout's own bounds (`LayoutLimits`): it reads the validated
/// document once.
package enum LayoutLint {
    /// Warnings about `layout`, in document order. With `state` (a sample state), templates
    /// are checked against it; with `attributes`, so are `attributes.*` names.
    package static func warnings(for layout: Layout, state: JSONObject? = nil, attributes: JSONObject? = nil) -> [LayoutWarning] {
        var lint = Walk(state: state, attributes: attributes)
        lint.visit(.object(layout.json), path: "", key: nil, inView: nil)
        return lint.warnings
    }

    /// At most this many: a layout of a hundred misspelt tags needs the first few.
    static let maximumWarnings = 32

    /// The key within two edits of `key` (about a third of its length), the nearest first; of
    /// equally near ones, the first of `candidates`.
    static func closest(to key: String, among candidates: [String]) -> String? {
        let budget = min(2, max(1, (key.count + 1) / 3))
        return
            candidates
            .map { ($0, editDistance(key, $0, cap: budget + 1)) }
            .filter { $0.1 <= budget }
            .min { $0.1 < $1.1 }?.0
    }

    /// Levenshtein distance, giving up at `cap` (keys are short; a long one costs at most
    /// its length times the other's).
    static func editDistance(_ a: String, _ b: String, cap: Int) -> Int {
        let a = Array(a), b = Array(b)
        guard abs(a.count - b.count) < cap, a.count <= 256, b.count <= 256 else { return cap }
        var previous = Array(0...b.count)
        for (i, x) in a.enumerated() {
            var current = [i + 1]
            for (j, y) in b.enumerated() {
                current.append(min(previous[j + 1] + 1, current[j] + 1, previous[j] + (x == y ? 0 : 1)))
            }
            previous = current
        }
        return min(previous[b.count], cap)
    }

    private struct Walk {
        let state: JSONObject?
        let attributes: JSONObject?
        var warnings: [LayoutWarning] = []
        /// Each path and name warned about once.
        var seen: Set<String> = []

        /// Members whose strings are no templates.
        static let plainKeys: Set<String> = ["type", "action", "keylineTint", "backgroundTint", "chip"]
        /// Maps from what a template renders to an icon: keys and values are plain.
        static let mapKeys: Set<String> = ["names", "symbols"]
        /// The members of a `progress` or `timer` view that must render to numbers.
        static let measureKeys: Set<String> = ["value", "total", "from", "to"]

        mutating func warn(_ path: String, _ message: String) {
            guard warnings.count < maximumWarnings, seen.insert(path + "\u{0}" + message).inserted else { return }
            warnings.append(LayoutWarning(path: path, message: message))
        }

        /// `inView`: the `type` of the view object `value` is a member of.
        mutating func visit(_ value: JSON, path: String, key: String?, inView: String?) {
            switch value {
            case .object(let object):
                guard key.map({ !Self.mapKeys.contains($0) }) ?? true else { return }
                let type = object["type"]?.stringValue
                for (member, child) in object {
                    visit(child, path: path.isEmpty ? member : "\(path).\(member)", key: member, inView: type)
                }
            case .array(let items):
                for (index, item) in items.enumerated() { visit(item, path: "\(path)[\(index)]", key: nil, inView: nil) }
            case .string(let source):
                guard let key, !Self.plainKeys.contains(key) else { return }
                let tags = TemplateTags(source)
                if Self.measureKeys.contains(key), inView == "progress" || inView == "timer" {
                    checkMeasure(tags, source: source, path: path)
                }
                checkNames(tags, path: path)
            default:
                return
            }
        }

        /// A measure renders to a number only if nothing but a number's characters is written
        /// around its tags (outside sections, which may render nothing).
        mutating func checkMeasure(_ tags: TemplateTags, source: String, path: String) {
            guard tags.isReadable else { return }
            let literal = Substring(tags.topLevelText).trimmingWhitespace()
            if tags.names.isEmpty {
                if Double(literal) == nil {
                    warn(path, "'\(source)' can never be a number: write a number, or a template that renders one (\"{{state.percent}}\")")
                }
            } else if let stray = literal.first(where: { !"0123456789.-+eE".contains($0) && !$0.isWhitespace }) {
                warn(path, "'\(source)' can never be a number: '\(stray)' around the tags makes every rendering text; render the number alone")
            }
        }

        /// Each `state.…` (and `attributes.…`) name must lead somewhere in the sample.
        mutating func checkNames(_ tags: TemplateTags, path: String) {
            for name in tags.names {
                let parts = name.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
                guard parts.count >= 2, let root = parts.first else { continue }
                let sample: JSONObject?
                switch root {
                case "state": sample = state
                case "attributes": sample = attributes
                default: continue  // relative to a section, or a transform's own name
                }
                guard let sample else { continue }
                if let missing = Self.firstMissing(parts.dropFirst(), in: sample) {
                    let candidates = missing.siblings
                    let hint = LayoutLint.closest(to: missing.key, among: candidates).map { " (did you mean \($0)?)" } ?? ""
                    warn(path, "{{\(name)}}: the sample \(root) has no '\(missing.key)'\(hint); it renders as nothing")
                }
            }
        }

        /// The first part of a dotted name the sample lacks, and the keys it has there. A
        /// name that reaches a value that is not an object (an array's index, a string's
        /// length) is not followed further.
        static func firstMissing(_ parts: ArraySlice<String>, in sample: JSONObject) -> (key: String, siblings: [String])? {
            var object = sample
            for part in parts {
                guard let next = object[part] else { return (part, Array(object.keys)) }
                guard let nested = next.objectValue else { return nil }
                object = nested
            }
            return nil
        }
    }
}

/// One warning of `LayoutLint`: where in the document, and what is probably wrong.
package struct LayoutWarning: Sendable, Hashable, CustomStringConvertible {
    /// e.g. `expanded.bottom.value`.
    package var path: String
    package var message: String

    package init(path: String, message: String) {
        self.path = path
        self.message = message
    }

    package var description: String { "\(path): \(message)" }
}

/// The names a template's tags use, and its text outside every section, read with the default
/// delimiters. A template that changes them (`{{=<% %>=}}`) is not read (`isReadable` false).
struct TemplateTags {
    private(set) var names: [String] = []
    private(set) var topLevelText = ""
    private(set) var isReadable = true

    init(_ source: String) {
        var rest = Substring(source)
        var depth = 0
        while let opening = rest.firstRange(of: "{{") {
            if depth == 0 { topLevelText += rest[..<opening.lowerBound] }
            rest = rest[opening.upperBound...]
            let triple = rest.first == "{"
            guard let closing = rest.firstRange(of: triple ? "}}}" : "}}") else {
                isReadable = false
                return
            }
            var tag = rest[..<closing.lowerBound].trimmingWhitespace()
            rest = rest[closing.upperBound...]
            let sigil = tag.first
            switch sigil {
            case "=":
                isReadable = false
                return
            case "!", ">":
                continue
            case "#", "^", "$", "<":
                depth += 1
                tag = tag.dropFirst().trimmingWhitespace()
            case "/":
                depth = max(0, depth - 1)
                continue
            case "{", "&":
                tag = tag.dropFirst().trimmingWhitespace()
            default:
                break
            }
            // A transform's argument is the name: `uppercase(state.title)`.
            if let open = tag.lastIndex(of: "("), let close = tag[open...].firstIndex(of: ")") {
                tag = tag[tag.index(after: open)..<close].trimmingWhitespace()
            }
            if !tag.isEmpty && tag != "." { names.append(String(tag)) }
        }
        if depth == 0 { topLevelText += rest }
    }
}

extension Layout {
    /// The `action` of every button in the layout, in any region.
    package var buttonActions: Set<String> {
        var actions: Set<String> = []
        func collect(_ view: LayoutView) {
            switch view {
            case .button(let button): actions.insert(button.action)
            case .hstack(let stack), .vstack(let stack): stack.children.forEach(collect)
            case .link(let link): collect(link.child)
            case .image(let image): if let fallback = image.fallback { collect(fallback) }
            case .text, .symbol, .timer, .progress, .spacer: break
            }
        }
        let regions = [lockScreen, compactLeading, compactTrailing, minimal, expanded.leading, expanded.trailing, expanded.center, expanded.bottom]
        for region in regions.compactMap({ $0 }) { collect(region.view) }
        return actions
    }
}
