package import OrderedJSON
import Mustache

/// A Mustache template over `state.*` and `attributes.*`, compiled once when the layout is
/// validated. Two templates are equal when their text is.
///
/// Text is produced as plain text (no HTML escaping); a missing key renders as nothing.
/// Partials have no library to come from and render as nothing too.
package struct LayoutTemplate: Sendable, Hashable, CustomStringConvertible {
    /// The template as the extension wrote it.
    package let source: String
    private let compiled: MustacheTemplate

    /// Compiles `source`; a syntax error is reported at the root path.
    package init(_ source: String) throws(LayoutError) {
        try self.init(source, contentType: .text, at: .root)
    }

    init(_ source: String, contentType: MustacheOutput, at path: LayoutPath) throws(LayoutError) {
        self.source = source
        let scan = MustacheTagScan(source)
        if scan.deepestSectionNesting > LayoutLimits.maximumTemplateNesting {
            throw path.error("sections nested more than \(LayoutLimits.maximumTemplateNesting) deep")
        }
        if scan.deepestTransformNesting > LayoutLimits.maximumTemplateNesting {
            throw path.error("transforms nested more than \(LayoutLimits.maximumTemplateNesting) deep")
        }
        do {
            // A standalone pragma line leaves the template's own first line standalone too,
            // so whitespace renders exactly as without the prefix.
            self.compiled = try MustacheTemplate(string: "{{%CONTENT_TYPE:\(contentType.name)}}\n" + source)
        } catch {
            throw path.error(Self.syntaxReason(source))
        }
    }

    /// Compiling the unprefixed text again gives line and column numbers as the author sees them.
    private static func syntaxReason(_ source: String) -> String {
        do {
            _ = try MustacheTemplate(string: source)
            return "invalid template"
        } catch {
            return MustacheErrorReason.reason(for: error, in: source)
        }
    }

    /// Renders against the Mustache root of `LayoutRenderer`, spending from its work: text past
    /// `LayoutLimits.maximumRenderedBytes` is cut and ends in "…", and a render that ran out
    /// of work is "…" alone, since what it produced so far is missing values.
    func render(_ root: MustacheRoot) -> String {
        guard let output = renderUncut(root) else { return Self.unfinished }
        guard output.utf8.count > LayoutLimits.maximumRenderedBytes else { return output }
        // Whole characters only, so a cut never splits one.
        var bytes = Self.unfinished.utf8.count
        return output.prefix { character in
            bytes += character.utf8.count
            return bytes <= LayoutLimits.maximumRenderedBytes
        } + Self.unfinished
    }

    /// The whole output, or nil when the render ran out of work; for what must be exact (a URL).
    func renderUncut(_ root: MustacheRoot) -> String? {
        root.work.spending(step: source.utf8.count) { budget in
            let output = compiled.render(MustacheJSONObject(object: root.object, budget: budget))
            return budget.isExhausted ? nil : output
        }
    }

    private static let unfinished = "…"

    /// Renders against attributes and state directly.
    package func render(attributes: JSONObject, state: JSONObject) -> String {
        render(MustacheRoot.root(attributes: attributes, state: state))
    }

    /// Whether the template has tags at all; a plain text needs no rendering.
    var isLiteral: Bool { !source.contains("{{") }

    package var description: String { source }

    package static func == (a: LayoutTemplate, b: LayoutTemplate) -> Bool { a.source == b.source }
    package func hash(into hasher: inout Hasher) { hasher.combine(source) }
}
