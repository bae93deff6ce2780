import IslandCore
import IslandJSON

/// The island and the lock-screen list resolved at one instant: what every presenter draws.
public struct IslandScene: Sendable {
    /// An activity with its layout rendered at the scene's instant.
    public struct Entry: Sendable {
        public var item: PresenterItem
        public var layout: RenderedLayout

        public init(item: PresenterItem, now: Double) {
            self.item = item
            self.layout = item.render(now: now)
        }
    }

    public var mode: IslandState.Mode
    /// compact: the activity shown; minimal: the attached one (also kept while expanded).
    public var attached: Entry?
    /// minimal: the detached bubble.
    public var detached: Entry?
    /// expanded: the expanded activity.
    public var expanded: Entry?
    public var lockScreen: [Entry]
    public var alert: PresenterAlert?
    public var now: Double

    public init(model: PresenterModel, now: Double) {
        self.now = now
        self.alert = model.alert
        let island = model.island
        attached = model.item(island.attached).map { Entry(item: $0, now: now) }
        detached = model.item(island.detached).map { Entry(item: $0, now: now) }
        expanded = island.mode == .expanded ? model.item(island.expanded).map { Entry(item: $0, now: now) } : nil
        lockScreen = model.lockScreen.map { Entry(item: $0, now: now) }
        // A mode whose activities are unknown degrades to what can be drawn.
        switch island.mode {
        case .expanded where expanded == nil, .minimal where detached == nil:
            mode = attached == nil ? .none : .compact
        case .compact where attached == nil, .minimal where attached == nil:
            mode = .none
        default:
            mode = island.mode
        }
        if mode != .minimal && mode != .expanded { detached = nil }
        if mode == .none { attached = nil }
    }

    /// The activity the island is about: the expanded one, else the attached one.
    public var primary: Entry? { expanded ?? attached }

    /// Whether something on screen changes by itself as time passes (a timer or a progress bar
    /// over a time range), so presenters redraw every second.
    public var isTicking: Bool {
        let entries = [attached, detached, expanded].compactMap { $0 } + lockScreen
        return entries.contains { $0.layout.regions.contains { $0.view.containsTimeDependentView } }
    }

    // MARK: Text

    /// The one-line text of the island for bars: compact → the chip, else compact leading and
    /// trailing; minimal → the attached and detached minimal views; expanded → the expanded
    /// activity's compact text; none → empty.
    public var text: String {
        switch mode {
        case .none: ""
        case .compact: attached.map(Self.compactText) ?? ""
        case .minimal: [attached, detached].compactMap { $0.map(Self.minimalText) }.filter { !$0.isEmpty }.joined(separator: " · ")
        case .expanded: expanded.map(Self.compactText) ?? ""
        }
    }

    /// A shorter text: the chip, else the minimal view(s).
    public var shortText: String {
        switch mode {
        case .none: ""
        case .compact, .expanded: primary.map { $0.layout.chip.map(Self.oneLine) ?? Self.minimalText($0) } ?? ""
        case .minimal: text
        }
    }

    /// The lock-screen list, one activity per line.
    public var lockScreenLines: [String] { lockScreen.map(Self.lockScreenText) }

    /// The compact presentation as one line: the chip, else leading and trailing.
    public static func compactText(_ entry: Entry) -> String {
        if let chip = entry.layout.chip, !chip.isEmpty { return oneLine(chip) }
        return oneLine([entry.layout.compactLeading, entry.layout.compactTrailing]
            .compactMap { $0?.view.displayText }.filter { !$0.isEmpty }.joined(separator: " "))
    }

    /// The minimal presentation as one line.
    public static func minimalText(_ entry: Entry) -> String {
        oneLine((entry.layout.minimal ?? entry.layout.compactLeading)?.view.displayText ?? "")
    }

    /// The lock-screen presentation as one line, with the state when it is not plainly active.
    public static func lockScreenText(_ entry: Entry) -> String {
        var text = oneLine(entry.layout.lockScreen?.view.displayText ?? entry.item.type)
        if text.isEmpty { text = entry.item.app }
        switch entry.item.activityState {
        case "stale": text += " (stale)"
        case "ended": text += " (ended)"
        default: break
        }
        return text
    }

    /// The progress the primary activity shows, 0…1: its first progress view in compact,
    /// minimal, expanded or lock-screen order.
    public var primaryProgress: Double? {
        guard let primary else { return nil }
        return primary.layout.regions.lazy.compactMap { $0.view.firstProgress }.first?.fraction
    }

    /// Newlines and other control characters (C0, DEL, C1) become spaces: a bar line is one
    /// line, and none reaches a terminal.
    static func oneLine(_ text: String) -> String { TerminalText.sanitize(text) }
}

extension RenderedLayout {
    /// Every region present, compact first, then minimal, expanded and lock screen.
    public var regions: [RenderedRegion] {
        [compactLeading, compactTrailing, minimal, expandedLeading, expandedCenter, expandedTrailing, expandedBottom, lockScreen]
            .compactMap { $0 }
    }

    /// The buttons of the expanded presentation, in reading order: leading, center, trailing, bottom.
    public var expandedButtons: [(action: String, label: String)] {
        [expandedLeading, expandedCenter, expandedTrailing, expandedBottom].compactMap { $0 }.flatMap { $0.view.buttons }
    }
}

extension RenderedView {
    public var containsTimeDependentView: Bool {
        switch self {
        case .timer: true
        case .progress: true
        case .hstack(let children, _), .vstack(let children, _): children.contains { $0.containsTimeDependentView }
        case .link(_, let child): child.containsTimeDependentView
        default: false
        }
    }

    public var firstProgress: RenderedProgress? {
        switch self {
        case .progress(let progress): progress
        case .hstack(let children, _), .vstack(let children, _): children.lazy.compactMap(\.firstProgress).first
        case .link(_, let child): child.firstProgress
        default: nil
        }
    }

    public var buttons: [(action: String, label: String)] {
        switch self {
        case .button(let action, let label, let symbol): [(action, [symbol.map(Self.glyph(forSymbol:)), label].compactMap { $0 }.filter { !$0.isEmpty }.joined(separator: " "))]
        case .hstack(let children, _), .vstack(let children, _): children.flatMap(\.buttons)
        case .link(_, let child): child.buttons
        default: []
        }
    }
}

extension RenderedView {
    /// The view as one line for text-only presenters: like `plainText`, but a symbol that is a
    /// freedesktop icon name (which a bar or terminal cannot draw) becomes a close emoji, or
    /// nothing; emoji symbols stay.
    public var displayText: String {
        switch self {
        case .symbol(let name): Self.glyph(forSymbol: name)
        case .hstack(let children, _): children.map(\.displayText).filter { !$0.isEmpty }.joined(separator: " ")
        case .vstack(let children, _): children.map(\.displayText).filter { !$0.isEmpty }.joined(separator: " · ")
        case .link(_, let child): child.displayText
        case .button(_, let label, let symbol): [symbol.map(Self.glyph(forSymbol:)), label].compactMap { $0 }.filter { !$0.isEmpty }.joined(separator: " ")
        default: plainText
        }
    }

    static let iconGlyphs: [String: String] = [
        "appointment-soon": "⏰", "alarm": "⏰", "alarm-symbolic": "⏰", "timer": "⏱", "chronometer": "⏱",
        "media-playback-start": "▶", "media-playback-pause": "⏸", "media-playback-stop": "⏹",
        "mail-unread": "✉", "mail-message-new": "✉", "call-start": "📞", "phone": "📞",
        "dialog-warning": "⚠", "dialog-error": "✖", "dialog-information": "ℹ", "emblem-ok": "✔",
        "folder-download": "⬇", "go-down": "⬇", "go-up": "⬆", "network-transmit": "⬆", "network-receive": "⬇",
        "weather-clear": "☀", "weather-overcast": "☁", "weather-showers": "🌧", "airplane-mode": "✈",
        "car": "🚗", "food": "🍴", "coffee": "☕", "music": "♫", "audio-x-generic": "♫",
        "battery": "🔋", "system-run": "⚙", "applications-system": "⚙", "starred": "★", "user-available": "●",
    ]

    static func glyph(forSymbol name: String) -> String {
        let isIconName = !name.isEmpty && name.unicodeScalars.allSatisfy { $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0) || $0 == "-" || $0 == "_" || $0 == ".") }
        guard isIconName else { return name }
        let base = name.hasSuffix("-symbolic") ? String(name.dropLast("-symbolic".count)) : name
        return iconGlyphs[name] ?? iconGlyphs[base] ?? ""
    }
}
