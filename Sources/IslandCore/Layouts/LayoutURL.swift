import OrderedJSON

/// A URL a tap or a link opens. It may contain Mustache tags after its scheme
/// (`https://example.com/orders/{{attributes.order}}`); substituted values are percent-encoded.
///
/// A layout may hold absolute URLs whose scheme has the form `[a-z][a-z0-9+.-]*`, except
/// schemes that run or read something locally (`javascript`, `vbscript`, `data`, `file`,
/// `blob`, `filesystem`). Which of them a tap may open is an allowlist (docs/design.md §6):
/// `http`, `https`, and the schemes the app's own desktop entry declares
/// (`isAllowed(declaredSchemes:)`).
package struct LayoutURL: Sendable, Hashable, CustomStringConvertible {
    package let template: LayoutTemplate
    /// Lowercased, without the colon.
    package let scheme: String

    /// Validates `source`; an invalid URL is reported at the root path.
    package init(_ source: String) throws(LayoutError) {
        try self.init(source, at: .root)
    }

    init(_ source: String, at path: LayoutPath) throws(LayoutError) {
        guard let colon = source.firstIndex(of: ":") else {
            throw path.error("not an absolute URL: no scheme")
        }
        let schemeText = source[..<colon]
        guard !schemeText.contains("{{") else {
            throw path.error("the URL's scheme must be written out, not come from a template")
        }
        self.template = try LayoutTemplate(source, contentType: .url, at: path)
        self.scheme = schemeText.lowercased()
        if let problem = Self.problem(with: Self.withTagsFilledIn(source)) { throw path.error(problem) }
    }

    /// The URL for one activity, or nil if what the template produced is not an allowed URL.
    /// The scheme comes out lowercased (`HTTP:` as `http:`), as openers match it.
    func resolve(_ root: MustacheRoot) -> String? {
        guard let url = template.renderUncut(root), url.utf8.count <= LayoutLimits.maximumRenderedBytes,
            Self.problem(with: url) == nil, let colon = url.firstIndex(of: ":")
        else { return nil }
        return url[..<colon].lowercased() + url[colon...]
    }

    /// The schemes a tap opens for every app; the web's, whose handler is the user's browser.
    package static let webSchemes: Set<String> = ["http", "https"]

    /// Whether a tap may open this URL for an app whose desktop entry declares
    /// `declaredSchemes` (its `x-scheme-handler/*` types, lowercased).
    package func isAllowed(declaredSchemes: Set<String>) -> Bool {
        Self.webSchemes.contains(scheme) || declaredSchemes.contains(scheme)
    }

    package var description: String { template.source }

    /// Stands a plain value in for every tag, so the static check sees a URL of the shape the
    /// template will produce; the rendered URL is checked again.
    private static func withTagsFilledIn(_ source: String) -> String {
        var filled = ""
        var rest = Substring(source)
        while let open = rest.firstRange(of: "{{"), let close = rest[open.upperBound...].firstRange(of: "}}") {
            filled += rest[..<open.lowerBound] + "x"
            rest = rest[close.upperBound...].drop { $0 == "}" }
        }
        return filled + rest
    }

    private static let forbiddenSchemes: Set<String> = ["javascript", "vbscript", "data", "file", "blob", "filesystem"]

    /// Why `url` is not allowed, or nil.
    static func problem(with url: String) -> String? {
        guard let colon = url.firstIndex(of: ":") else { return "not an absolute URL: no scheme" }
        let scheme = url[..<colon].lowercased()
        let rest = url[url.index(after: colon)...]
        guard isSchemeSyntax(scheme) else { return "'\(url[..<colon])' is not a URL scheme" }
        guard !forbiddenSchemes.contains(scheme) else { return "'\(scheme):' URLs are not allowed" }
        guard !url.unicodeScalars.contains(where: { $0.properties.isWhitespace || $0.value < 0x20 || $0.value == 0x7F }) else {
            return "a URL cannot contain spaces or control characters"
        }
        if scheme == "http" || scheme == "https" {
            guard rest.hasPrefix("//"), rest.dropFirst(2).first.map({ $0 != "/" }) == true else {
                return "an \(scheme) URL needs a host"
            }
        }
        return rest.isEmpty ? "nothing after '\(scheme):'" : nil
    }

    /// `[a-z][a-z0-9+.-]*`, lowercase only: what a caller gets after lowercasing a scheme.
    package static func isSchemeSyntax(_ scheme: String) -> Bool {
        guard let first = scheme.unicodeScalars.first, ("a"..."z").contains(first) else { return false }
        return scheme.unicodeScalars.allSatisfy { scalar in
            ("a"..."z").contains(scalar) || ("0"..."9").contains(scalar) || "+.-".unicodeScalars.contains(scalar)
        }
    }
}
