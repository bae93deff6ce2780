import IslandCore
import OrderedJSON
import OrderedCollections
import Testing

/// Every kind of invalid layout is refused with the path of the offending member and why.
@Suite struct LayoutValidationTests {
    private func expectError(_ text: String, path: String, reason: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let error = try layoutError(text)
        #expect(error == LayoutError(path: path, reason: reason), sourceLocation: sourceLocation)
    }

    @Test func emptyLayoutIsValid() throws {
        #expect(try layoutError("{}") == nil)
    }

    @Test func documentMustBeAnObject() throws {
        try expectError("[]", path: "", reason: "expected an object, found array")
        #expect(throws: LayoutError(path: "", reason: "not JSON: unexpected end of input at byte 1")) { try Layout(text: "{") }
    }

    @Test func unknownKeys() throws {
        try expectError(##"{"colour": "#FFFFFF"}"##, path: "colour", reason: "unknown key 'colour'")
        try expectError(
            ##"{"compactTrailing": {"type": "text", "template": "x", "font": "bold"}}"##,
            path: "compactTrailing.font", reason: "unknown key 'font'")
        try expectError(
            ##"{"expanded": {"middle": {"priority": 0, "type": "spacer"}}}"##,
            path: "expanded.middle", reason: "unknown key 'middle'")
        // Placement keys belong to the expanded regions only.
        try expectError(
            ##"{"compactLeading": {"type": "spacer", "priority": 1}}"##,
            path: "compactLeading.priority", reason: "unknown key 'priority'")
        try expectError(
            ##"{"lockScreen": {"type": "progress", "value": 1, "segments": [{"length": 1, "colour": "#000000"}]}}"##,
            path: "lockScreen.segments[0].colour", reason: "unknown key 'colour'; did you mean 'color'?")
    }

    /// A near miss of a key names the key it probably meant, as the configuration's do.
    @Test func nearMissKeysGetADidYouMean() throws {
        try expectError(
            ##"{"compactLeding": {"type": "spacer"}}"##, path: "compactLeding",
            reason: "unknown key 'compactLeding'; did you mean 'compactLeading'?")
        try expectError(
            ##"{"lockscreen": {"type": "spacer"}}"##, path: "lockscreen",
            reason: "unknown key 'lockscreen'; did you mean 'lockScreen'?")
        try expectError(
            ##"{"compactTrailing": {"type": "text", "tempalte": "x"}}"##, path: "compactTrailing.tempalte",
            reason: "unknown key 'tempalte'; did you mean 'template'?")
    }

    @Test func unknownViewType() throws {
        try expectError(
            ##"{"lockScreen": {"type": "vstack", "children": [{"type": "video", "url": "https://x.example/a.webm"}]}}"##,
            path: "lockScreen.children[0].type",
            reason: "unknown view type 'video'; expected one of text, symbol, timer, progress, hstack, vstack, spacer, link, button, image")
    }

    @Test func requiredFields() throws {
        try expectError(##"{"minimal": {"template": "x"}}"##, path: "minimal.type", reason: "required")
        try expectError(##"{"lockScreen": {"type": "text"}}"##, path: "lockScreen.template", reason: "required")
        try expectError(##"{"minimal": {"type": "symbol"}}"##, path: "minimal.name", reason: "required")
        try expectError(##"{"lockScreen": {"type": "hstack"}}"##, path: "lockScreen.children", reason: "required")
        try expectError(##"{"lockScreen": {"type": "link", "url": "https://a.example"}}"##, path: "lockScreen.child", reason: "required")
        try expectError(##"{"lockScreen": {"type": "link", "child": {"type": "spacer"}}}"##, path: "lockScreen.url", reason: "required")
        try expectError(##"{"lockScreen": {"type": "button", "label": "Stop"}}"##, path: "lockScreen.action", reason: "required")
        try expectError(##"{"lockScreen": {"type": "button", "action": "stop"}}"##, path: "lockScreen.label", reason: "required")
        try expectError(##"{"expanded": {"center": {"type": "spacer"}}}"##, path: "expanded.center.priority", reason: "required")
        try expectError(
            ##"{"minimal": {"type": "progress"}}"##, path: "minimal.value",
            reason: "required: a progress needs value (and total) or from and to")
        try expectError(##"{"minimal": {"type": "progress", "from": 1}}"##, path: "minimal.to", reason: "required")
        try expectError(##"{"minimal": {"type": "timer", "from": 1}}"##, path: "minimal.to", reason: "required for a timer that counts down")
        try expectError(
            ##"{"minimal": {"type": "timer", "to": 1, "countsDown": false}}"##, path: "minimal.from",
            reason: "required for a timer that counts up")
        try expectError(
            ##"{"lockScreen": {"type": "progress", "value": 1, "points": [{"color": "#000000"}]}}"##,
            path: "lockScreen.points[0].position", reason: "required")
    }

    @Test func wrongTypesAndValues() throws {
        try expectError(##"{"lockScreen": {"type": "text", "template": 3}}"##, path: "lockScreen.template", reason: "expected a string, found int")
        try expectError(##"{"minimal": {"type": 1}}"##, path: "minimal.type", reason: "expected a string, found int")
        try expectError(##"{"minimal": "☕"}"##, path: "minimal", reason: "expected a view object, found string")
        try expectError(##"{"hideContentOnLockScreen": "yes"}"##, path: "hideContentOnLockScreen", reason: "expected a bool, found string")
        try expectError(
            ##"{"expanded": {"center": {"type": "spacer", "priority": "high"}}}"##,
            path: "expanded.center.priority", reason: "expected a number, found string")
        try expectError(
            ##"{"minimal": {"type": "timer", "to": true}}"##, path: "minimal.to",
            reason: "expected a number or a template string, found bool")
        try expectError(##"{"minimal": {"type": "symbol", "name": ""}}"##, path: "minimal.name", reason: "must not be empty")
        try expectError(
            ##"{"minimal": {"type": "symbol", "name": "x", "names": {"a": 1}}}"##, path: "minimal.names.a",
            reason: "expected a symbol name, found int")
        try expectError(##"{"minimal": {"type": "button", "action": "", "label": "Go"}}"##, path: "minimal.action", reason: "must not be empty")
        try expectError(
            ##"{"minimal": {"type": "button", "action": "a", "label": "A", "symbol": "x", "symbols": {"a": 1}}}"##,
            path: "minimal.symbols.a", reason: "expected a symbol name, found int")
        try expectError(
            ##"{"minimal": {"type": "button", "action": "a", "label": "A", "symbol": "x", "symbols": []}}"##,
            path: "minimal.symbols", reason: "expected an object, found array")
        try expectError(
            ##"{"minimal": {"type": "button", "action": "a", "label": "A", "symbols": {"a": "b"}}}"##,
            path: "minimal.symbol", reason: "required with symbols")
        try expectError(
            ##"{"minimal": {"type": "button", "action": "a", "label": "A", "symbol": "{{#x}}"}}"##,
            path: "minimal.symbol", reason: "unterminated section '#x'")
        try expectError(##"{"lockScreen": {"type": "vstack", "spacing": -1, "children": []}}"##, path: "lockScreen.spacing", reason: "must not be negative")
        try expectError(
            ##"{"lockScreen": {"type": "progress", "value": 1, "segments": [{"length": 1}, {"length": 0}]}}"##,
            path: "lockScreen.segments[1].length", reason: "must be more than 0")
        try expectError(
            ##"{"lockScreen": {"type": "progress", "value": 1, "points": [{"position": -2}]}}"##,
            path: "lockScreen.points[0].position", reason: "must not be negative")
        try expectError(
            ##"{"lockScreen": {"type": "progress", "value": 1, "to": 5}}"##, path: "lockScreen.to",
            reason: "a progress has either value/total or from/to, not both")
        try expectError(
            ##"{"lockScreen": {"type": "progress", "from": 1, "to": 5, "total": 3}}"##, path: "lockScreen.total",
            reason: "a time-range progress has no total")
    }

    @Test func mustacheSyntax() throws {
        try expectError(
            ##"""
            {"expanded": {"center": {"priority": 1, "type": "vstack", "children": [
              {"type": "text", "template": "ok"}, {"type": "spacer"},
              {"type": "text", "template": "{{#items}}{{name}}"}]}}}
            """##, path: "expanded.center.children[2].template", reason: "unterminated section '#items'")
        try expectError(
            ##"{"minimal": {"type": "text", "template": "{{#a}}x{{/b}}"}}"##,
            path: "minimal.template", reason: "'/b' does not close section '#a' at column 11")
        try expectError(
            ##"{"minimal": {"type": "text", "template": "x{{/b}}"}}"##,
            path: "minimal.template", reason: "'/b' closes no open section at column 5")
        try expectError(
            ##"{"minimal": {"type": "text", "template": "Hello {{name"}}"##,
            path: "minimal.template", reason: "unterminated tag at column 13")
        try expectError(
            ##"{"minimal": {"type": "text", "template": "{{a b}}"}}"##,
            path: "minimal.template", reason: "malformed tag at column 5")
        try expectError(
            ##"{"minimal": {"type": "text", "template": "a\n{{#x}}\n{{^y}}\n{{/x}}"}}"##,
            path: "minimal.template", reason: "'/x' does not close section '^y' at line 4, column 4")
        try expectError(
            ##"{"minimal": {"type": "symbol", "name": "{{=<% %>}}"}}"##,
            path: "minimal.name", reason: "malformed set-delimiter tag at column 7")
        try expectError(
            ##"{"minimal": {"type": "timer", "to": "{{#state.end}}"}}"##,
            path: "minimal.to", reason: "unterminated section '#state.end'")
        try expectError(
            ##"{"minimal": {"type": "button", "action": "go", "label": "{{^done}}Go"}}"##,
            path: "minimal.label", reason: "unterminated section '^done'")
    }

    @Test func templateNestingIsBounded() throws {
        func nested(_ depth: Int, open: String = "{{#", close: String = "}}") -> String {
            String(repeating: "\(open)a\(close)", count: depth) + String(repeating: "\(open.dropLast())/a\(close)", count: depth)
        }
        #expect(try layoutError(##"{"minimal": {"type": "text", "template": "\##(nested(16))"}}"##) == nil)
        try expectError(
            ##"{"minimal": {"type": "text", "template": "\##(nested(17))"}}"##,
            path: "minimal.template", reason: "sections nested more than 16 deep")
        // A delimiter change does not hide nesting.
        try expectError(
            ##"{"minimal": {"type": "text", "template": "{{=<% %>=}}\##(nested(17, open: "<%#", close: "%>"))"}}"##,
            path: "minimal.template", reason: "sections nested more than 16 deep")
        try expectError(
            ##"{"minimal": {"type": "text", "template": "{{=| |=}}\##(nested(17, open: "|#", close: "|"))"}}"##,
            path: "minimal.template", reason: "sections nested more than 16 deep")
        // Within the size limit, this once overflowed swift-mustache's recursive parser.
        try expectError(
            ##"{"minimal": {"type": "text", "template": "\##(nested(2700))"}}"##,
            path: "minimal.template", reason: "sections nested more than 16 deep")
        let transforms = "{{" + String(repeating: "reversed(", count: 17) + "a" + String(repeating: ")", count: 17) + "}}"
        #expect(throws: LayoutError(path: "", reason: "transforms nested more than 16 deep")) { try LayoutTemplate(transforms) }
    }

    /// swift-mustache reads each section with its own copy of the delimiters, so a change made
    /// inside a section ends with it. Found by fuzz-layout, and reproduced with it:
    /// the nesting check kept `<% %>` after `<%/a%>`, did not see the `{{#b}}` sections that
    /// followed, and a layout of 5,000 of them overflowed the parser's stack.
    @Test func delimiterChangesEndWithTheirSection() throws {
        let scoped = "{{#a}}{{=<% %>=}}<%/a%>"
        try expectError(
            ##"{"minimal": {"type": "text", "template": "\##(scoped)\##(String(repeating: "{{#b}}", count: 5000))"}}"##,
            path: "minimal.template", reason: "sections nested more than 16 deep")
        let seventeen = String(repeating: "{{#b}}", count: 17) + String(repeating: "{{/b}}", count: 17)
        try expectError(
            ##"{"minimal": {"type": "text", "template": "\##(scoped)\##(seventeen)"}}"##,
            path: "minimal.template", reason: "sections nested more than 16 deep")
        try expectError(
            ##"{"minimal": {"type": "text", "template": "\##(scoped){{#b}}"}}"##,
            path: "minimal.template", reason: "unterminated section '#b'")
        // What the scan assumes is what the engine does: after the section, {{ }} are tags again.
        let template = try LayoutTemplate("{{#state.on}}{{=<% %>=}}<%state.stage%><%/state.on%>, {{state.stage}}")
        #expect(template.render(attributes: [:], state: ["on": true, "stage": "brewing"]) == "brewing, brewing")
    }

    @Test func colors() throws {
        for valid in ["#FF8800", "#ff8800", "#FF880080"] {
            #expect(try layoutError(##"{"keylineTint": "\##(valid)"}"##) == nil)
        }
        for invalid in ["red", "#FFF", "#FF88001", "#GG0000", "FF8800", ""] {
            try expectError(
                ##"{"backgroundTint": "\##(invalid)"}"##, path: "backgroundTint",
                reason: "'\(invalid)' is not a color: expected #RRGGBB or #RRGGBBAA")
        }
        try expectError(
            ##"{"lockScreen": {"type": "progress", "value": 1, "points": [{"position": 1, "color": "blue"}]}}"##,
            path: "lockScreen.points[0].color", reason: "'blue' is not a color: expected #RRGGBB or #RRGGBBAA")
        #expect(LayoutColor(hex: "#ff880080")?.description == "#ff880080")
        #expect(LayoutColor(hex: "#FF8800")?.description == "#ff8800")
    }

    @Test func chipLengthCountsCharacters() throws {
        #expect(try layoutError(##"{"chip": "Coffee!"}"##) == nil)
        #expect(try layoutError(##"{"chip": "🍕🍕🍕🍕🍕🍕🍕"}"##) == nil)
        #expect(try layoutError(##"{"chip": "👨‍👩‍👧‍👦 ETA 5"}"##) == nil)
        try expectError(##"{"chip": "Delivery"}"##, path: "chip", reason: "'Delivery' is 8 characters, more than the 7 allowed")
        try expectError(##"{"chip": 7}"##, path: "chip", reason: "expected a string, found int")
    }

    @Test func urls() throws {
        for valid in [
            "https://example.com/x", "http://example.com", "mailto:help@example.com", "x-coffee://orders/1",
            "myapp:open", "HTTPS://EXAMPLE.COM", "https://example.com/orders/{{attributes.order}}",
            "x-app://{{state.host}}",
        ] {
            #expect(try layoutError(##"{"url": "\##(valid)"}"##) == nil, "\(valid)")
        }
        try expectError(##"{"url": "javascript:alert(1)"}"##, path: "url", reason: "'javascript:' URLs are not allowed")
        try expectError(##"{"url": "JavaScript:alert(1)"}"##, path: "url", reason: "'javascript:' URLs are not allowed")
        try expectError(##"{"url": "file:///etc/passwd"}"##, path: "url", reason: "'file:' URLs are not allowed")
        try expectError(##"{"url": "data:text/html,<b>hi</b>"}"##, path: "url", reason: "'data:' URLs are not allowed")
        try expectError(##"{"url": "/orders/1"}"##, path: "url", reason: "not an absolute URL: no scheme")
        try expectError(##"{"url": "1app:x"}"##, path: "url", reason: "'1app' is not a URL scheme")
        try expectError(##"{"url": "https:example.com"}"##, path: "url", reason: "an https URL needs a host")
        try expectError(##"{"url": "mailto:"}"##, path: "url", reason: "nothing after 'mailto:'")
        try expectError(##"{"url": "https://example.com/a b"}"##, path: "url", reason: "a URL cannot contain spaces or control characters")
        try expectError(##"{"url": "{{state.scheme}}://x"}"##, path: "url", reason: "the URL's scheme must be written out, not come from a template")
        try expectError(##"{"url": "https://x.example/{{#a}}"}"##, path: "url", reason: "unterminated section '#a'")
        try expectError(
            ##"{"expanded": {"bottom": {"priority": 0, "type": "link", "url": "javascript:void(0)", "child": {"type": "spacer"}}}}"##,
            path: "expanded.bottom.url", reason: "'javascript:' URLs are not allowed")
        try expectError(
            ##"{"compactLeading": {"type": "symbol", "name": "x", "url": "file:///x"}}"##,
            path: "compactLeading.url", reason: "'file:' URLs are not allowed")
    }

    @Test func nestingDepth() throws {
        func nested(_ depth: Int) -> String {
            (1..<depth).reduce(##"{"type": "spacer"}"##) { inner, _ in ##"{"type": "vstack", "children": [\##(inner)]}"## }
        }
        #expect(try layoutError(##"{"lockScreen": \##(nested(8))}"##) == nil)
        let ninth = "lockScreen" + String(repeating: ".children[0]", count: 8)
        try expectError(##"{"lockScreen": \##(nested(9))}"##, path: ninth, reason: "views nested more than 8 deep")
        // A link's child is one level deeper too.
        let linked = ##"{"type": "link", "url": "https://a.example", "child": \##(nested(8))}"##
        try expectError(
            ##"{"minimal": \##(linked)}"##, path: "minimal.child" + String(repeating: ".children[0]", count: 7),
            reason: "views nested more than 8 deep")
    }

    @Test func totalViews() throws {
        let spacers = { (count: Int) in Array(repeating: ##"{"type": "spacer"}"##, count: count).joined(separator: ",") }
        // 1 stack + 63 spacers = 64 views.
        #expect(try layoutError(##"{"lockScreen": {"type": "hstack", "children": [\##(spacers(63))]}}"##) == nil)
        // The limit spans regions: 2 here, so the lock screen's 63rd child is the 65th view.
        try expectError(
            ##"""
            {"lockScreen": {"type": "hstack", "children": [\##(spacers(63))]},
             "compactLeading": {"type": "spacer"}}
            """##, path: "compactLeading", reason: "more than 64 views in the layout")
        try expectError(
            ##"{"minimal": {"type": "spacer"}, "lockScreen": {"type": "hstack", "children": [\##(spacers(63))]}}"##,
            path: "lockScreen.children[62]", reason: "more than 64 views in the layout")
    }

    @Test func serializedSize() throws {
        let long = String(repeating: "x", count: 32 * 1024)
        let error = try layoutError(##"{"lockScreen": {"type": "text", "template": "\##(long)"}}"##)
        #expect(error?.path == "")
        #expect(error?.reason == "the layout is 32812 bytes, more than the 32768 allowed")
        let fits = String(repeating: "x", count: 32 * 1024 - 60)
        #expect(try layoutError(##"{"lockScreen": {"type": "text", "template": "\##(fits)"}}"##) == nil)
    }

    @Test func firstProblemInDocumentOrderIsReported() throws {
        try expectError(##"{"chip": "far too long", "colour": 1}"##, path: "colour", reason: "unknown key 'colour'")
        try expectError(##"{"lockScreen": {"type": "text"}, "minimal": {"type": "nope"}}"##, path: "lockScreen.template", reason: "required")
    }

    @Test func errorDescribesPathAndReason() {
        #expect(LayoutError(path: "minimal.name", reason: "required").description == "minimal.name: required")
        #expect(LayoutError(path: "", reason: "too big").description == "too big")
    }
}
