package import OrderedJSON
import OrderedCollections
import Synchronization

extension Layout {
    /// The layout for activities whose type has no registered one: a generic rendering built
    /// from the *shape* of the activity (which keys exist and their JSON types), never from the
    /// state's values, so it stays the same while an activity's values change (the attributes,
    /// fixed for its life, decide which of them are short enough to show). It reads like a
    /// product, not a dump of the state (docs/design.md §10).
    ///
    /// Heuristics, in order:
    /// - **title**: `attributes.title`, else `attributes.name`, else `state.title` (the first
    ///   that is a string), else the type made readable (`PizzaDeliveryAttributes` → "Pizza Delivery").
    /// - **measure**: `state.progress` (a fraction 0…1, as in ActivityKit's `ProgressView`),
    ///   `state.percent` (0…100), or `state.value` out of `state.total` → a progress bar;
    ///   `state.endsAt`/`endDate`/`endTime` (epoch seconds) → a countdown;
    ///   `state.startedAt`/`startDate`/`startTime`/`since` with no length of time (`duration`)
    ///   in the state → the time since, counting up.
    /// - **details**: up to two other short string attributes (a file name, a repository), as
    ///   they are, under the title; never one that repeats the title (`island run`'s command).
    /// - **symbol**: `state.symbol` or `attributes.symbol` when a string; else by shape: a
    ///   command (`attributes.command`) → a terminal, a countdown or a time left → an alarm,
    ///   changed while `paused`, `done`, `failed`, `cancelled`… is true or by an `exitStatus`
    ///   (zero → done, else failed); else none, and a progress bar or the title leads.
    /// - **values**: the other scalar members of `state` with keys a template can name
    ///   (letters, digits, `_`, `-`): a status (`status`, `stage`, `phase`…) in words without
    ///   a label (`inFlight` → "In flight"), then lengths of time (`duration`, `timeLeft`,
    ///   `…Seconds`; `remaining` and `left` only beside other time — a `duration`, an end or a
    ///   start — for alone they count files as well as seconds) as `42 s` or `5:03`, dates (`…At`, `…Date`, `…Time`) as times of day
    ///   ("Started at 14:05"), other values as "Label: value", and booleans last, as their
    ///   label while true and nothing while false. A boolean that only repeats the status
    ///   (`status: inFlight`, `inFlight: true`) is left out when there is a status.
    ///
    /// Regions: compact leading = the symbol, else the progress bar, else the title; compact
    /// trailing = the measure (unless it leads), else the first value, else the title;
    /// minimal = the measure, else the symbol, else the first value; lock screen = symbol and
    /// title, then the details, up to three values, then the measure; expanded = leading, title
    /// and trailing, with the details, the values and a progress bar below — each shown once:
    /// neither the value trailing shows nor a bar leading shows is repeated below.
    package static func `default`(for type: String, attributes: JSONObject = [:], state: JSONObject = [:]) -> Layout {
        let shape = DefaultLayoutShape(type: type, attributes: attributes, state: state)
        // Every update of an activity without a registered layout needs its default, and its
        // shape rarely changes: validate each shape once, not once per update.
        if let cached = defaultLayouts.withLock({ $0[shape] }) { return cached }
        // Built as JSON and validated like any layout, so the default never bypasses the rules
        // and presenters receive it in the same form. Failing would be a bug here (the tests
        // cover every shape); presenters then fall back to their own rendering.
        let layout = (try? Layout(json: .object(shape.document))) ?? .empty
        defaultLayouts.withLock { cache in
            // Shapes come from clients; a bound keeps a client inventing keys from growing it.
            if cache.count >= 512 { cache.removeAll(keepingCapacity: true) }
            cache[shape] = layout
        }
        return layout
    }

    private static let defaultLayouts = Mutex<[DefaultLayoutShape: Layout]>([:])

    /// What of an activity's state its default layout depends on: the state's keys in order
    /// and the kinds of their values — numbers alike — never the values
    /// (`JSON.objectShape(ofText:)` of `ActivityContent.stateText`). While it stays the same,
    /// so does the default layout: an update checks it rather than build the layout's shape
    /// again, or the state's tree at all.
    package static func defaultLayoutKey(stateText: [UInt8]) -> [UInt8]? {
        JSON.objectShape(ofText: stateText)
    }

    /// No regions: every one falls back to the presenter's own rendering.
    static let empty = Layout(
        lockScreen: nil, compactLeading: nil, compactTrailing: nil, minimal: nil, expanded: ExpandedLayout(),
        keylineTint: nil, backgroundTint: nil, chip: nil, lockScreenVisibility: .public, publicLayout: nil, url: nil, json: [:])
}

/// What the default layout makes of an activity's keys.
struct DefaultLayoutShape: Hashable {
    private static let titleKeys: [(scope: String, key: String)] = [("attributes", "title"), ("attributes", "name"), ("state", "title")]
    private static let endKeys = ["endsAt", "endDate", "endTime"]
    private static let startKeys = ["startedAt", "startDate", "startTime", "since"]
    /// String keys whose value says where the activity is (`running`, `inFlight`): shown as
    /// words without a label, and first.
    private static let statusKeys: Set<String> = ["status", "stage", "phase", "state", "step", "result", "outcome"]
    /// Time left, said so by the key itself.
    private static let timeLeftKeys: Set<String> = ["timeLeft", "timeRemaining", "remainingTime", "secondsLeft", "secondsRemaining"]
    /// What is left, of time only beside other time (`island timer` paused: `remaining` with
    /// the attributes' `duration`); alone it may count files or bytes.
    private static let leftKeys: Set<String> = ["remaining", "left"]
    private static let durationKeys: Set<String> = timeLeftKeys.union(["duration", "elapsed"])
    /// Short attributes shown as they are: a file name, a repository, not a paragraph.
    private static let maximumDetailCharacters = 48
    private static let maximumDetails = 2
    /// Flags that, while true, say more than the shape's own symbol; the first true one wins.
    private static let flagSymbols: [(keys: [String], icon: String)] = [
        (["failed", "error"], "dialog-error-symbolic"),
        (["cancelled", "canceled"], "process-stop-symbolic"),
        (["done", "finished", "completed", "succeeded"], "emblem-ok-symbolic"),
        (["paused"], "media-playback-pause-symbolic"),
    ]
    private static let exitKeys = ["exitStatus", "exitCode"]
    private static let maximumPairs = 3

    /// How a state value is shown, in the order the summary lists them.
    enum Kind: Int, Hashable, Comparable {
        case status, duration, date, value, flag
        static func < (a: Kind, b: Kind) -> Bool { a.rawValue < b.rawValue }
    }

    struct Piece: Hashable {
        let key: String
        let kind: Kind
    }

    let title: JSON
    /// Attribute keys whose short strings are shown under the title.
    let details: [String]
    let symbol: JSON?
    let measure: JSON?
    /// State values shown, status first and flags last.
    let pieces: [Piece]

    init(type: String, attributes: JSONObject, state: JSONObject) {
        let scopes = ["attributes": attributes, "state": state]
        let titleSource = Self.titleKeys.first(where: { scopes[$0.scope]?[$0.key]?.stringValue != nil })
        if let (scope, key) = titleSource {
            title = Self.text("{{\(scope).\(key)}}")
        } else {
            title = Self.text(Self.readableType(type))
        }
        // Attributes never change, so their values may decide what is shown of them.
        let titleText = titleSource.flatMap { scopes[$0.scope]?[$0.key]?.stringValue }
        details = Array(
            attributes.lazy.filter { key, value in
                guard let text = value.stringValue, Self.isNameable(key), key != "symbol",
                    !(titleSource?.scope == "attributes" && titleSource?.key == key)
                else { return false }
                return !text.isEmpty && text != titleText && text.count <= Self.maximumDetailCharacters
                    && !text.contains(where: \.isNewline)
            }.map(\.key).prefix(Self.maximumDetails))

        var used: Set<String> = ["title", "symbol"]
        (measure, used) = Self.measure(in: state, used: used)
        let besideTime =
            attributes["duration"]?.doubleValue != nil || state["duration"]?.doubleValue != nil
            || (Self.endKeys + Self.startKeys).contains { state[$0]?.doubleValue != nil }
        var pieces: [Piece] = []
        for (key, value) in state where Self.isNameable(key) && !used.contains(key) {
            switch value {
            case .bool: pieces.append(Piece(key: key, kind: .flag))
            case .string: pieces.append(Piece(key: key, kind: Self.statusKeys.contains(key) ? .status : .value))
            case .int, .double:
                let duration = Self.isDurationKey(key) || (besideTime && Self.leftKeys.contains(key))
                pieces.append(Piece(key: key, kind: Self.isDateKey(key) ? .date : duration ? .duration : .value))
            default: continue
            }
        }
        // A status says what a flag would again (`status: inFlight`, `inFlight: true`).
        if pieces.contains(where: { $0.kind == .status }) { pieces.removeAll { $0.kind == .flag && !Self.isSymbolFlag($0.key) } }
        self.pieces = pieces.enumerated().sorted { ($0.element.kind, $0.offset) < ($1.element.kind, $1.offset) }.map(\.element)

        symbol = Self.symbol(attributes: attributes, state: state, measure: measure, pieces: self.pieces)
    }

    var document: JSONObject {
        let firstPiece = pieces.first { $0.kind != .flag } ?? pieces.first
        let firstValue = firstPiece.map { Self.text(Self.valueTemplate($0)) }
        // Without a symbol, a progress bar stands in front (a ring where there is room).
        let leading: JSON? = symbol ?? (measure?["type"] == "progress" ? measure : JSON?.none)
        let trailingMeasure: JSON? = leading == measure ? JSON?.none : measure
        let trailing: JSON? = trailingMeasure ?? firstValue
        let summary: JSON? = Self.summary(Array(pieces.prefix(Self.maximumPairs))).map(Self.text)
        // The expanded form shows all its regions at once: what its trailing region or its
        // leading one shows is not repeated below them.
        let shownAbove = trailingMeasure == nil ? firstPiece : nil
        let summaryBelow: JSON? = Self.summary(Array(pieces.filter { $0 != shownAbove }.prefix(Self.maximumPairs))).map(Self.text)
        let bar: JSON? = measure?["type"] == "progress" && leading != measure ? measure : JSON?.none
        let detailLine: JSON? =
            details.isEmpty
            ? JSON?.none
            : Self.text(details.map { "{{attributes.\($0)}}" }.joined(separator: " · "))
        let heading: JSON = symbol.map { ["type": "hstack", "children": [$0, title], "spacing": 6] } ?? title

        // `JSON` is nil-literal convertible: here and below, a bare `nil` would become `.null`
        // instead of a missing view, hence the explicit optional types.
        var expanded: JSONObject = ["center": Self.region(title, priority: 1)]
        if let leading { expanded["leading"] = Self.region(leading, priority: 0) }
        if let trailing { expanded["trailing"] = Self.region(trailing, priority: 0) }
        let below = ([detailLine, summaryBelow, bar] as [JSON?]).compactMap { $0 }
        if !below.isEmpty { expanded["bottom"] = Self.region(Self.vstack(below), priority: 0) }

        var document: JSONObject = [
            "lockScreen": Self.vstack(([heading, detailLine, summary, measure] as [JSON?]).compactMap { $0 }),
            "compactLeading": leading ?? title,
            "minimal": measure ?? symbol ?? firstValue ?? title,
            "expanded": .object(expanded),
        ]
        if let compactTrailing = trailing ?? (leading == nil ? JSON?.none : title) { document["compactTrailing"] = compactTrailing }
        return document
    }

    /// A value as text: a status in words, a date as a time, a length of time as one, a flag
    /// as its name when true and nothing when false.
    private static func valueTemplate(_ piece: Piece) -> String {
        let tag = "state.\(piece.key)"
        switch piece.kind {
        case .status: return "{{humanized(\(tag))}}"
        case .date: return "{{time(\(tag))}}"
        case .duration: return "{{duration(\(tag))}}"
        // Other text may be a name ("alice", "libfoo"): it stays as it is.
        case .value: return "{{\(tag)}}"
        case .flag: return "{{#\(tag)}}\(readableKey(piece.key)){{/\(tag)}}"
        }
    }

    /// "Running · Started at 14:05 · Paused": labels from the keys (a status needs none), and
    /// flags only while true, each bringing its separator, so nothing dangles when they are false.
    private static func summary(_ pieces: [Piece]) -> String? {
        let fixed = pieces.filter { $0.kind != .flag }.map { piece in
            switch piece.kind {
            case .status: valueTemplate(piece)
            case .date: readableKey(piece.key) + (piece.key.hasSuffix("At") || piece.key.hasSuffix("_at") ? " " : ": ") + valueTemplate(piece)
            default: readableKey(piece.key) + ": " + valueTemplate(piece)
            }
        }
        var text = fixed.joined(separator: " · ")
        var flagsBefore: [String] = []
        for piece in pieces where piece.kind == .flag {
            let tag = "state.\(piece.key)"
            let separator = fixed.isEmpty ? anyTrue(flagsBefore, then: " · ") : " · "
            text += "{{#\(tag)}}\(separator)\(readableKey(piece.key)){{/\(tag)}}"
            flagsBefore.append(tag)
        }
        return text.isEmpty ? nil : text
    }

    /// `text` when any of the boolean `tags` is true, as nested sections.
    private static func anyTrue(_ tags: [String], then text: String) -> String {
        guard let first = tags.first else { return "" }
        return "{{#\(first)}}\(text){{/\(first)}}{{^\(first)}}" + anyTrue(Array(tags.dropFirst()), then: text) + "{{/\(first)}}"
    }

    /// The symbol the shape calls for: the activity's own, a terminal for a command, a timer for
    /// time; flags and an exit status change it while they say more. Nil when nothing fits.
    private static func symbol(attributes: JSONObject, state: JSONObject, measure: JSON?, pieces: [Piece]) -> JSON? {
        if state["symbol"]?.stringValue != nil { return ["type": "symbol", "name": "{{state.symbol}}"] }
        if attributes["symbol"]?.stringValue != nil { return ["type": "symbol", "name": "{{attributes.symbol}}"] }
        let base: String
        if attributes["command"]?.stringValue != nil {
            base = "utilities-terminal-symbolic"
        } else if measure?["type"] == "timer"
            || pieces.contains(where: { $0.kind == .duration && (timeLeftKeys.contains($0.key) || leftKeys.contains($0.key)) })
        {
            base = "alarm-symbolic"
        } else {
            return nil
        }
        // Conditions in order, each a section tag and the icon it shows while true; an exit
        // status is zero or tells of a failure, so with one there is no base to fall back to.
        var conditions: [(tag: String, icon: String)] = []
        var fallback = base
        if let exit = exitKeys.first(where: { state[$0]?.doubleValue != nil }) {
            conditions.append(("equalzero(state.\(exit))", "emblem-ok-symbolic"))
            fallback = "dialog-error-symbolic"
        }
        for (keys, icon) in flagSymbols {
            for key in keys where state[key]?.boolValue != nil { conditions.append(("state.\(key)", icon)) }
        }
        guard !conditions.isEmpty else { return ["type": "symbol", "name": .string(base)] }
        // Mustache cannot compare, so the name is a token the first true condition writes
        // (`{{#a}}s0{{/a}}{{^a}}…fallback…{{/a}}`), and `names` turns it into the icon.
        var names: JSONObject = ["s\(conditions.count)": .string(fallback)]
        var template = "s\(conditions.count)"
        for (index, condition) in conditions.enumerated().reversed() {
            names["s\(index)"] = .string(condition.icon)
            template = "{{#\(condition.tag)}}s\(index){{/\(condition.tag)}}{{^\(condition.tag)}}\(template){{/\(condition.tag)}}"
        }
        return ["type": "symbol", "name": .string(template), "names": .object(names)]
    }

    private static func isSymbolFlag(_ key: String) -> Bool { flagSymbols.contains { $0.keys.contains(key) } }

    private static func isDateKey(_ key: String) -> Bool {
        ["At", "_at", "Date", "_date", "Time", "_time"].contains { key.hasSuffix($0) && key.count > $0.count }
            || ["date", "time", "since", "until", "deadline"].contains(key)
    }

    private static func isDurationKey(_ key: String) -> Bool {
        durationKeys.contains(key) || ["Duration", "_duration", "Seconds", "_seconds"].contains { key.hasSuffix($0) && key.count > $0.count }
    }

    private static func measure(in state: JSONObject, used: Set<String>) -> (JSON?, Set<String>) {
        var used = used
        if state["progress"]?.doubleValue != nil {
            used.insert("progress")
            return (self.progress("{{state.progress}}", total: 1), used)
        }
        if state["percent"]?.doubleValue != nil {
            used.insert("percent")
            return (self.progress("{{state.percent}}", total: 100), used)
        }
        if state["value"]?.doubleValue != nil, state["total"]?.doubleValue != nil {
            used.formUnion(["value", "total"])
            return (["type": "progress", "value": "{{state.value}}", "total": "{{state.total}}"], used)
        }
        if let end = endKeys.first(where: { state[$0]?.doubleValue != nil }) {
            used.insert(end)
            return (["type": "timer", "to": .string("{{state.\(end)}}"), "countsDown": true], used)
        }
        // Started and not yet over (no length of time known): the time since, ticking.
        if let start = startKeys.first(where: { state[$0]?.doubleValue != nil }),
            !state.keys.contains(where: { isDurationKey($0) || leftKeys.contains($0) })
        {
            used.insert(start)
            return (["type": "timer", "from": .string("{{state.\(start)}}"), "countsDown": false], used)
        }
        return (JSON?.none, used)
    }

    private static func text(_ template: String) -> JSON { ["type": "text", "template": .string(template)] }
    private static func progress(_ value: String, total: Int) -> JSON {
        ["type": "progress", "value": .string(value), "total": .int(total)]
    }
    private static func vstack(_ children: [JSON]) -> JSON { ["type": "vstack", "children": .array(children), "spacing": 4] }
    private static func region(_ view: JSON, priority: Int) -> JSON {
        guard case .object(var object) = view else { return view }
        object["priority"] = .int(priority)
        return .object(object)
    }

    /// Keys a Mustache tag can name as they are: a dot would walk into a member, other
    /// punctuation would end the tag.
    private static func isNameable(_ key: String) -> Bool {
        !key.isEmpty
            && key.unicodeScalars.allSatisfy { scalar in
                ("a"..."z").contains(scalar) || ("A"..."Z").contains(scalar) || ("0"..."9").contains(scalar) || scalar == "_" || scalar == "-"
            }
    }

    /// `org.example.PizzaDeliveryAttributes` → "Pizza Delivery". Only letters, digits and
    /// spaces survive, so the title can never contain a tag.
    static func readableType(_ type: String) -> String {
        var name = Substring(type.split(separator: ".").last ?? "")
        if name.hasSuffix("Attributes"), name.count > "Attributes".count { name = name.dropLast("Attributes".count) }
        let words = self.words(name).map { $0.prefix(1).uppercased() + $0.dropFirst() }
        return words.isEmpty ? "Activity" : words.joined(separator: " ")
    }

    /// `etaMinutes` → "Eta minutes".
    static func readableKey(_ key: String) -> String {
        let sentence = words(Substring(key)).map { $0.lowercased() }.joined(separator: " ")
        return sentence.prefix(1).uppercased() + sentence.dropFirst()
    }

    /// Splits on non-alphanumerics and at lower-to-upper case changes.
    static func words(_ text: Substring) -> [String] {
        var words: [String] = []
        var current = ""
        for character in text {
            guard character.isLetter || character.isNumber else {
                if !current.isEmpty { words.append(current) }
                current = ""
                continue
            }
            if character.isUppercase, let last = current.last, last.isLowercase || last.isNumber {
                words.append(current)
                current = ""
            }
            current.append(character)
        }
        if !current.isEmpty { words.append(current) }
        return words
    }
}
