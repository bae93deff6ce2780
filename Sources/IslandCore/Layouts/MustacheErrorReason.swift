import Mustache

/// Words a swift-mustache parse error for the extension's author: what is wrong, which
/// section, and where in the template.
enum MustacheErrorReason {
    static func reason(for error: any Error, in template: String) -> String {
        guard let parserError = error as? MustacheTemplate.ParserError else { return "invalid template: \(error)" }
        let location = location(of: parserError.context, in: template)
        guard let syntax = parserError.error as? MustacheTemplate.Error else {
            // The only other error swift-mustache's parser raises: it read past the end
            // looking for a tag's closing delimiter.
            return "unterminated tag \(location)"
        }
        switch syntax {
        case .expectedSectionEnd:
            if case .unterminated(let name) = MustacheTagScan(template).problem {
                return "unterminated section '\(name)'"
            }
            return "unterminated section"
        case .sectionCloseNameIncorrect:
            if case .strayClose(let name, let open) = MustacheTagScan(template).problem {
                guard let open else { return "'/\(name)' closes no open section \(location)" }
                return "'/\(name)' does not close section '\(open)' \(location)"
            }
            return "closing tag does not match its section \(location)"
        case .unfinishedName:
            return "malformed tag \(location)"
        case .invalidSetDelimiter:
            return "malformed set-delimiter tag \(location)"
        case .transformAppliedToInheritanceSection, .illegalTokenInsideInheritSection, .textInsideInheritSection:
            return "malformed inheritance block \(location)"
        case .invalidConfigVariableSyntax, .unrecognisedConfigVariable:
            return "malformed pragma \(location)"
        @unknown default:
            return "invalid template \(location): \(syntax)"
        }
    }

    /// "at column 9" for a one-line template, "at line 2, column 9" otherwise.
    private static func location(of context: MustacheParserContext, in template: String) -> String {
        template.contains(where: \.isNewline)
            ? "at line \(context.lineNumber), column \(context.columnNumber)"
            : "at column \(context.columnNumber)"
    }
}
