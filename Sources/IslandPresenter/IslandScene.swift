package import Foundation
package import IslandCore
import OrderedJSON
import FreeDesktop
import IslandProtocol

/// The island and the lock-screen list resolved at one instant: what every presenter draws.
package struct IslandScene: Sendable {
    /// An activity with its layout rendered at the scene's instant.
    package struct Entry: Sendable {
        package var item: PresenterItem
        package var layout: RenderedLayout

        /// An activity that has ended takes no button press (the daemon refuses one), so its
        /// card shows none, in every presenter that draws from here.
        package init(item: PresenterItem, now: Double, timeZone: TimeZone = .current) {
            self.item = item
            let layout = item.render(now: now, timeZone: timeZone)
            self.layout = item.hasEnded ? layout.withoutButtons : layout
        }

        /// Whether what it shows changes by itself as time passes: a timer or a progress over a
        /// time range, while it lives (an ended one stands still at its end).
        package var ticks: Bool {
            !item.isFrozen && layout.regions.contains { $0.view.containsTimeDependentView }
        }
    }

    package var mode: IslandState.Mode
    /// compact: the activity shown; minimal: the attached one (also kept while expanded).
    package var attached: Entry?
    /// minimal: the detached bubble.
    package var detached: Entry?
    /// expanded: the expanded activity.
    package var expanded: Entry?
    package var lockScreen: [Entry]
    package var alert: PresenterAlert?
    /// The user has Do Not Disturb on.
    package var isFocused: Bool
    /// The screen is shared, and the daemon sends no activity content meanwhile.
    package var isContentHidden: Bool
    package var now: Double

    /// The scene at `now`, its times of day in `timeZone` (the user's, but for images that
    /// must come out the same wherever they are drawn).
    package init(model: PresenterModel, now: Double, timeZone: TimeZone = .current) {
        self.now = now
        self.alert = model.alert
        self.isFocused = model.focusSince != nil
        self.isContentHidden = model.contentHidden
        let island = model.island
        // One rendering an activity, wherever the scene shows it (the island and the list
        // show the same activity alike): rendering is the costliest part of a frame.
        var rendered: [String: Entry] = [:]
        func entry(_ item: PresenterItem) -> Entry {
            if let entry = rendered[item.id] { return entry }
            let entry = Entry(item: item, now: now, timeZone: timeZone)
            rendered[item.id] = entry
            return entry
        }
        attached = model.item(island.attached).map(entry)
        detached = model.item(island.detached).map(entry)
        expanded = island.mode == .expanded ? model.item(island.expanded).map(entry) : nil
        lockScreen = model.lockScreen.map(entry)
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
    package var primary: Entry? { expanded ?? attached }

    /// What pressing the button `action` of the island's activity would press.
    package enum ButtonLookup: Sendable, Hashable {
        /// The activity `id` has it.
        case found(id: String)
        /// The island shows nothing; or the activity asked for is neither on it nor in the list.
        case noActivity
        /// The activity has ended: its buttons act no more.
        case ended(id: String)
        /// The activity has no such button; `available` are the actions it has.
        case missing(id: String, available: [String])
    }

    /// The button `action` of the island's activity (`primary`), or of the activity `id` when
    /// given (on the island or in the lock-screen list), in any region of its layout.
    package func button(_ action: String, of id: String? = nil) -> ButtonLookup {
        let chosen: Entry? = if let id { entry(id) } else { primary }
        guard let entry = chosen else { return .noActivity }
        if entry.item.hasEnded { return .ended(id: entry.item.id) }
        var available: [String] = []
        for region in entry.layout.regions {
            for button in region.view.buttons where !available.contains(button.action) { available.append(button.action) }
        }
        return available.contains(action) ? .found(id: entry.item.id) : .missing(id: entry.item.id, available: available)
    }

    /// The activity `id` as the scene shows it: on the island, else in the lock-screen list.
    package func entry(_ id: String) -> Entry? {
        [expanded, attached, detached].lazy.compactMap { $0 }.first { $0.item.id == id } ?? lockScreen.first { $0.item.id == id }
    }

    /// The most cells of an activity's title in a sentence.
    package static let titleWidth = 48

    /// An activity as a sentence names it for the user: its app, its title (the lock-screen
    /// line but its buttons, cut to `titleWidth` cells) and its id — `Coffee's "Flat white,
    /// order A-17" (id …)`.
    package static func naming(_ entry: Entry) -> String {
        var title = oneLine(entry.layout.lockScreen?.view.withoutButtons?.displayText ?? "")
        if title.allSatisfy(\.isWhitespace) { title = oneLine(entry.item.type) }
        return "\(oneLine(entry.item.displayName))'s \"\(truncate(title, toWidth: titleWidth))\" (id \(entry.item.id))"
    }

    /// Whether something on screen changes by itself as time passes (a timer or a progress bar
    /// over a time range), so presenters redraw every second.
    package var isTicking: Bool {
        let entries = [attached, detached, expanded].compactMap { $0 } + lockScreen
        return entries.contains { $0.ticks }
    }

    // MARK: Text

    /// The one-line text of the island for bars: an alert's title and body while it lasts;
    /// else compact → the live compact leading and trailing (the chip only when they are
    /// empty); minimal → the attached and detached minimal views, each with its symbol;
    /// expanded → the expanded activity's compact text; none → empty.
    package var text: String {
        if let alert = alertWithWords { return Self.alertText(alert) }
        switch mode {
        case .none: return ""
        case .compact: return attached.map(Self.compactText) ?? ""
        case .minimal: return [attached, detached].compactMap { $0.map(Self.minimalText) }.filter { !$0.isEmpty }.joined(separator: " · ")
        case .expanded: return expanded.map(Self.compactText) ?? ""
        }
    }

    /// A shorter text, for where space is short: the alert's title, else the chip, else the
    /// minimal view(s).
    package var shortText: String {
        if let alert = alertWithWords { return Self.oneLine(alert.title.isEmpty ? alert.body : alert.title) }
        switch mode {
        case .none: return ""
        case .compact, .expanded: return primary.map(Self.chipText) ?? ""
        case .minimal: return text
        }
    }

    /// The alert, when it says something: while the screen is shared islandd sends alerts
    /// without their words, and the island's own (hidden) text stands in for them.
    package var alertWithWords: PresenterAlert? {
        alert.flatMap { $0.title.isEmpty && $0.body.isEmpty ? nil : $0 }
    }

    /// An alert as one line: "title: body".
    package static func alertText(_ alert: PresenterAlert) -> String {
        oneLine([alert.title, alert.body].filter { !$0.isEmpty }.joined(separator: ": "))
    }

    /// The compact presentation as one line: leading and trailing, else the chip.
    package static func compactText(_ entry: Entry) -> String {
        let live = oneLine(
            [entry.layout.compactLeading, entry.layout.compactTrailing]
                .compactMap { $0?.view.displayText }.filter { !$0.isEmpty }.joined(separator: " "))
        if !live.isEmpty { return live }
        return oneLine(entry.layout.chip ?? "")
    }

    /// The chip, else the minimal presentation.
    package static func chipText(_ entry: Entry) -> String {
        if let chip = entry.layout.chip, !chip.isEmpty { return oneLine(chip) }
        return minimalText(entry)
    }

    /// The minimal presentation as one line, with the activity's symbol in front when the
    /// minimal view has none of its own (two bare "2%" say nothing of whose they are).
    package static func minimalText(_ entry: Entry) -> String {
        let parts = minimalParts(entry)
        return oneLine(
            [parts.symbol.map(RenderedView.glyph(forSymbol:)), parts.view?.displayText]
                .compactMap { $0 }.filter { !$0.isEmpty }.joined(separator: " "))
    }

    /// The most the detached bubble shows, in cells: a symbol and a short value.
    package static let detachedWidth = 10

    /// The minimal view, and the symbol of the compact leading view to show before it when
    /// the minimal view holds no symbol.
    package static func minimalParts(_ entry: Entry) -> (symbol: String?, view: RenderedView?) {
        let view = (entry.layout.minimal ?? entry.layout.compactLeading)?.view
        guard let view, view.firstSymbol == nil else { return (nil, view) }
        return (entry.layout.compactLeading?.view.firstSymbol, view)
    }

    /// The lock-screen list, one activity per line.
    package var lockScreenLines: [String] { lockScreen.map(Self.lockScreenText) }

    /// The lock-screen presentation as one line, with the state when it is not plainly active.
    package static func lockScreenText(_ entry: Entry) -> String {
        var text = oneLine(entry.layout.lockScreen?.view.displayText ?? entry.item.type)
        if text.isEmpty { text = entry.item.displayName }
        switch entry.item.activityState {
        case PresenterNames.Item.State.stale: text += " (stale)"
        case PresenterNames.Item.State.ended: text += " (ended)"
        default: break
        }
        return text
    }

    /// The progress the primary activity shows, 0…1: its first progress view in compact,
    /// minimal, expanded or lock-screen order.
    package var primaryProgress: Double? {
        guard let primary else { return nil }
        return primary.layout.regions.lazy.compactMap { $0.view.firstProgress }.first?.fraction
    }

    /// Newlines and other control characters (C0, DEL, C1) become spaces: a bar line is one
    /// line, and none reaches a terminal.
    static func oneLine(_ text: String) -> String { TerminalText.sanitize(text) }
}

extension PresenterItem {
    /// What heads the activity: the app's desktop entry name, else its id.
    package var displayName: String {
        if let appName, !TerminalText.sanitize(appName).allSatisfy(\.isWhitespace) { return appName }
        return app
    }

    /// "via Island Bridge" for an activity headed by the app a bridge spoke for: said after
    /// the heading, quieter, so the user knows what it came through.
    package var viaText: String? {
        guard sourceApp != nil else { return nil }
        if let producerName, !TerminalText.sanitize(producerName).allSatisfy(\.isWhitespace) { return "via " + producerName }
        return "via " + app
    }
}

extension RenderedLayout {
    /// Every region present, compact first, then minimal, expanded and lock screen.
    package var regions: [RenderedRegion] {
        [compactLeading, compactTrailing, minimal, expandedLeading, expandedCenter, expandedTrailing, expandedBottom, lockScreen]
            .compactMap { $0 }
    }

    /// The layout with no button left in any region; a region that held nothing else is gone.
    package var withoutButtons: RenderedLayout {
        var layout = self
        for key in [
            \RenderedLayout.lockScreen, \.compactLeading, \.compactTrailing, \.minimal,
            \.expandedLeading, \.expandedTrailing, \.expandedCenter, \.expandedBottom,
        ] {
            layout[keyPath: key] = layout[keyPath: key].flatMap { region in
                region.view.withoutButtons.map { view in
                    var kept = region
                    kept.view = view
                    return kept
                }
            }
        }
        return layout
    }

    /// The buttons of the expanded presentation, in reading order: leading, center, trailing, bottom.
    package var expandedButtons: [(action: String, label: String)] {
        [expandedLeading, expandedCenter, expandedTrailing, expandedBottom].compactMap { $0 }.flatMap { $0.view.buttons }
    }
}

extension RenderedView {
    package var containsTimeDependentView: Bool {
        switch self {
        case .timer: true
        case .progress: true
        case .hstack(let children, _), .vstack(let children, _): children.contains { $0.containsTimeDependentView }
        case .link(_, let child): child.containsTimeDependentView
        case .image(_, let fallback): fallback?.containsTimeDependentView ?? false
        default: false
        }
    }

    /// The first symbol in reading order.
    package var firstSymbol: String? {
        switch self {
        case .symbol(let name): name.isEmpty ? nil : name
        case .hstack(let children, _), .vstack(let children, _): children.lazy.compactMap(\.firstSymbol).first
        case .link(_, let child): child.firstSymbol
        case .button(_, _, let symbol): symbol
        case .image(_, let fallback): fallback?.firstSymbol
        default: nil
        }
    }

    package var firstProgress: RenderedProgress? {
        switch self {
        case .progress(let progress): progress
        case .hstack(let children, _), .vstack(let children, _): children.lazy.compactMap(\.firstProgress).first
        case .link(_, let child): child.firstProgress
        case .image(_, let fallback): fallback?.firstProgress
        default: nil
        }
    }

    /// The view with its buttons left out; nil when nothing else is left.
    package var withoutButtons: RenderedView? {
        switch self {
        case .button: return nil
        case .hstack(let children, let spacing):
            let kept = children.compactMap(\.withoutButtons)
            return kept.isEmpty && !children.isEmpty ? nil : .hstack(kept, spacing: spacing)
        case .vstack(let children, let spacing):
            let kept = children.compactMap(\.withoutButtons)
            return kept.isEmpty && !children.isEmpty ? nil : .vstack(kept, spacing: spacing)
        case .link(let url, let child): return child.withoutButtons.map { .link(url: url, child: $0) }
        case .image(let path, let fallback): return .image(path: path, fallback: fallback?.withoutButtons)
        default: return self
        }
    }

    package var buttons: [(action: String, label: String)] {
        switch self {
        case .button(let action, let label, let symbol):
            [(action, [symbol.map(Self.glyph(forSymbol:)), label].compactMap { $0 }.filter { !$0.isEmpty }.joined(separator: " "))]
        case .hstack(let children, _), .vstack(let children, _): children.flatMap(\.buttons)
        case .link(_, let child): child.buttons
        case .image(_, let fallback): fallback?.buttons ?? []
        default: []
        }
    }
}

extension RenderedView {
    /// The view as one line for text-only presenters: like `plainText`, but a symbol that is a
    /// freedesktop icon name (which a bar or terminal cannot draw) becomes a close emoji, or
    /// nothing; emoji symbols stay.
    package var displayText: String {
        switch self {
        case .symbol(let name): Self.glyph(forSymbol: name)
        case .hstack(let children, _): children.map(\.displayText).filter { !$0.isEmpty }.joined(separator: " ")
        case .vstack(let children, _): children.map(\.displayText).filter { !$0.isEmpty }.joined(separator: " · ")
        case .link(_, let child): child.displayText
        // The picture's path is no text for anyone: its fallback stands in.
        case .image(_, let fallback): fallback?.displayText ?? ""
        case .button(_, let label, let symbol): [symbol.map(Self.glyph(forSymbol:)), label].compactMap { $0 }.filter { !$0.isEmpty }.joined(separator: " ")
        default: plainText
        }
    }

    /// Icon names (without `-symbolic`) and families (their first words: `battery` for
    /// `battery-good`) as the emoji or glyph a text-only presenter shows for them.
    static let iconGlyphs: [String: String] = [
        "appointment-soon": "⏰", "alarm": "⏰", "timer": "⏱", "chronometer": "⏱", "appointment": "📅",
        "x-office-calendar": "📅", "preferences-system-time": "🕒", "alarm-clock": "⏰",
        "media-playback-start": "▶", "media-playback-pause": "⏸", "media-playback-stop": "⏹", "media-record": "⏺",
        "media-skip-forward": "⏭", "media-skip-backward": "⏮", "media-seek-forward": "⏩", "media-seek-backward": "⏪",
        "media": "▶", "audio-volume": "🔊", "audio-volume-muted": "🔇", "audio-input-microphone": "🎤", "microphone": "🎤",
        "audio-headphones": "🎧", "audio-x-generic": "♫", "music": "♫", "video": "🎬", "camera": "📷",
        "mail": "✉", "call": "📞", "phone": "📞", "chat": "💬", "user": "👤", "user-available": "●",
        "dialog-warning": "⚠", "dialog-error": "✖", "dialog-information": "ℹ", "dialog-question": "?", "help": "?",
        "emblem-ok": "✔", "object-select": "✔", "emblem-important": "❗", "emblem-favorite": "♥", "starred": "★", "non-starred": "☆",
        "folder-download": "⬇", "document-save": "💾", "edit-delete": "🗑", "go-down": "⬇", "go-up": "⬆",
        "go-next": "→", "go-previous": "←", "send-to": "➤", "network-transmit": "⬆", "network-receive": "⬇",
        "network-wireless": "📶", "network-cellular": "📶", "network": "🖧", "bluetooth": "ᛒ",
        "weather": "🌤", "weather-clear": "☀", "weather-few-clouds": "⛅", "weather-overcast": "☁", "weather-showers": "🌧",
        "weather-storm": "⛈", "weather-snow": "❄", "airplane-mode": "✈", "airplane": "✈", "flight": "✈",
        "car": "🚗", "bus": "🚌", "train": "🚆", "bicycle": "🚲", "find-location": "📍", "mark-location": "📍", "navigation": "🧭",
        "food": "🍴", "emoji-food": "🍴", "coffee": "☕", "battery": "🔋", "ac-adapter": "🔌", "display-brightness": "☀",
        "system-run": "⚙", "applications-system": "⚙", "preferences-system": "⚙", "system-shutdown": "⏻",
        "view-refresh": "⟳", "process-working": "⟳", "security-high": "🔒", "changes-prevent": "🔒", "view-conceal": "🔒", "printer": "🖨",
        "computer": "💻", "utilities-terminal": "🖥", "input-gaming": "🎮", "applications-games": "🎮", "package": "📦", "package-x-generic": "📦",
        "list-add": "+", "window-close": "✕", "process-stop": "✕",
    ]

    /// What a text presenter shows for an icon name no entry knows, so a symbol keeps its place
    /// in a line; the overlay, which draws symbols, draws nothing for it.
    package static let unknownIconGlyph = "•"

    /// The symbol as text: an emoji stays itself; an icon name becomes the glyph of its name
    /// or of its family (`battery-good-symbolic` → `battery`), else a neutral bullet.
    package static func glyph(forSymbol name: String) -> String {
        // An icon name rather than text (an emoji) to show as itself.
        guard IconName.isValid(name) else { return name }
        let base = name.hasSuffix("-symbolic") ? String(name.dropLast("-symbolic".count)) : name
        var words = base.split(separator: "-", omittingEmptySubsequences: false)
        while !words.isEmpty {
            if let glyph = iconGlyphs[words.joined(separator: "-")] { return glyph }
            words.removeLast()
        }
        return unknownIconGlyph
    }
}
