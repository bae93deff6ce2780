import IslandCore
import FreeDesktop
import IslandProtocol

/// One line of the terminal screen: text segments with an optional SGR style each.
package struct StyledLine: Sendable, Hashable {
    package struct Segment: Sendable, Hashable {
        /// Never holds a control character, a bidi control or an unbounded grapheme cluster
        /// (`TerminalText.display`): every segment is made here, the one place where the
        /// terminal presenter's text meets the terminal.
        package private(set) var text: String
        /// SGR parameters (`1`, `97;40`, …); nil for the default style.
        package var style: String?

        package init(text: String, style: String? = nil) {
            self.text = TerminalText.display(text)
            self.style = style
        }
    }

    package var segments: [Segment] = []

    package init(_ text: String = "", style: String? = nil) {
        if !text.isEmpty { segments = [Segment(text: text, style: style)] }
    }

    package var plain: String { segments.map(\.text).joined() }
    package var width: Int { displayWidth(plain) }

    package mutating func append(_ text: String, style: String? = nil) {
        if !text.isEmpty { segments.append(Segment(text: text, style: style)) }
    }

    /// The line with its styles as ANSI escapes, cut to `columns` cells.
    package func ansi(columns: Int) -> String {
        var out = ""
        var used = 0
        for segment in segments {
            guard used < columns else { break }
            // Measured once; again only when cut.
            var text = segment.text
            var width = displayWidth(text)
            if used + width > columns {
                text = truncate(text, toWidth: columns - used)
                width = displayWidth(text)
            }
            used += width
            if let style = segment.style { out += "\u{1B}[\(style)m\(text)\u{1B}[0m" } else { out += text }
        }
        return out
    }
}

/// What the terminal presenter draws around the scene.
package struct TerminalChrome: Sendable {
    package var selected: String?
    /// A transient message (the URL a tap returned, an error).
    package var message: String?
    package var link: Link

    /// The presenter's connection to islandd, as the status line tells it.
    package enum Link: Sendable, Equatable {
        case connected
        /// Before the first snapshot: nothing was lost, so nothing is "reconnecting".
        case connecting
        /// A connection ended or could not be made, for this reason; the presenter retries.
        case lost(reason: String)
    }

    package init(selected: String? = nil, message: String? = nil, link: Link = .connected) {
        self.selected = selected
        self.message = message
        self.link = link
    }
}

/// Lays the scene out on a `columns` × `rows` terminal: the island centred at the top, the
/// lock-screen list below, the status line last.
package struct TerminalFrame: Sendable {
    package static let islandStyle = "97;40"
    package static let statusStyle = "7"
    package static let keyHelp = "←/→/Tab select  e expand  c collapse  ⏎ tap  d dismiss  1-9 button  q quit"

    /// The widest compact pill, in cells.
    static let compactMaximumWidth = 40

    package let columns: Int
    package let rows: Int

    package init(columns: Int, rows: Int) {
        self.columns = max(20, columns)
        self.rows = max(6, rows)
    }

    package func render(_ scene: IslandScene, chrome: TerminalChrome) -> [StyledLine] {
        layout(scene, chrome: chrome).lines
    }

    /// Where the frame drew what keys act on: the island's first row, and each activity's card
    /// by its first row; only what fits on the screen.
    package struct Places: Sendable, Hashable {
        package var island: Int?
        package var cards: [String: Int] = [:]
    }

    /// The frame's lines, and where its activities are on them.
    package func layout(_ scene: IslandScene, chrome: TerminalChrome) -> (lines: [StyledLine], places: Places) {
        var lines: [StyledLine] = [StyledLine()]
        var places = Places()
        let islandLines = island(scene).map(centred)
        if scene.mode != .none, !islandLines.isEmpty { places.island = lines.count }
        lines += islandLines
        if let alert = scene.alertWithWords { lines += alertBox(alert).map(centred) }
        lines.append(StyledLine())
        let heading = lines.count
        var cards: [(id: String, rows: Range<Int>)] = []
        if !scene.lockScreen.isEmpty {
            lines.append(StyledLine("  Lock Screen", style: "1"))
            for entry in scene.lockScreen {
                places.cards[entry.item.id] = places.cards[entry.item.id] ?? lines.count
                let first = lines.count
                lines += card(entry, selected: entry.item.id == chrome.selected)
                cards.append((entry.item.id, first..<lines.count))
            }
        }
        var footer: [StyledLine] = []
        switch chrome.link {
        case .lost(let reason):
            // What the user must know first: a narrow terminal cuts the line's end, the detail.
            footer.append(StyledLine(" ⚠ reconnecting… \(reason)", style: "33"))
        case .connecting:
            footer.append(StyledLine(" connecting to islandd…", style: "2"))
        case .connected:
            if let message = chrome.message { footer.append(StyledLine(" " + IslandScene.oneLine(message))) }
        }
        var status =
            " \(scene.mode.rawValue) │ " + (scene.isFocused ? "Do Not Disturb │ " : "")
            + (scene.isContentHidden ? "Screen shared: content hidden │ " : "") + Self.keyHelp
        status += String(repeating: " ", count: max(0, columns - displayWidth(status)))
        footer.append(StyledLine(status, style: Self.statusStyle))
        let room = rows - footer.count
        scrollToSelected(&lines, &places, cards: cards, heading: heading, selected: chrome.selected, room: room)
        if lines.count > room { lines = Array(lines.prefix(room)) }
        while lines.count < room { lines.append(StyledLine()) }
        // A card whose title row is cut off is not on screen.
        places.cards = places.cards.filter { $0.value < room }
        if let row = places.island, row >= room { places.island = nil }
        return (lines + footer, places)
    }

    /// The list scrolls by whole cards so that the selected card ends on screen (its top, when
    /// it is taller than the room): the cards before it that do not fit are left out, and the
    /// heading says how many.
    private func scrollToSelected(
        _ lines: inout [StyledLine], _ places: inout Places, cards: [(id: String, rows: Range<Int>)],
        heading: Int, selected: String?, room: Int
    ) {
        guard let selected, let target = cards.first(where: { $0.id == selected }), target.rows.upperBound > room else { return }
        var dropped = 0, hidden: [String] = []
        for card in cards where card.id != selected && target.rows.upperBound - dropped > room {
            guard card.rows.lowerBound < target.rows.lowerBound else { break }
            dropped += card.rows.count
            hidden.append(card.id)
        }
        guard dropped > 0, let first = cards.first?.rows.lowerBound else { return }
        lines.removeSubrange(first..<(first + dropped))
        lines[heading] = StyledLine("  Lock Screen", style: "1")
        lines[heading].append("  ↑ \(hidden.count) more", style: "2")
        for (id, row) in places.cards {
            places.cards[id] = hidden.contains(id) ? nil : row >= first ? row - dropped : row
        }
    }

    // MARK: Island

    private func island(_ scene: IslandScene) -> [StyledLine] {
        switch scene.mode {
        case .none:
            return box([""], innerWidth: 12)
        case .compact:
            guard let entry = scene.attached else { return [] }
            var leading = entry.layout.compactLeading?.view.displayText ?? ""
            let trailing = entry.layout.compactTrailing?.view.displayText ?? ""
            if leading.isEmpty, trailing.isEmpty { leading = entry.layout.chip ?? "" }
            // As wide as its content, up to a pill's width: a long line is cut, not stretched.
            let maximum = min(columns - 4, Self.compactMaximumWidth)
            let inner = min(maximum, max(20, displayWidth(leading) + 4 + displayWidth(trailing)))
            return box([spread(leading, "", trailing, width: inner)], innerWidth: inner, stale: entry.item.isStale)
        case .minimal:
            guard let attached = scene.attached, let detached = scene.detached else { return [] }
            let left = IslandScene.minimalText(attached)
            let right = truncate(IslandScene.minimalText(detached), toWidth: IslandScene.detachedWidth)
            let leftBox = box([left], innerWidth: min(columns - 16, max(14, displayWidth(left))), stale: attached.item.isStale)
            let rightBox = box([right], innerWidth: max(2, displayWidth(right)), stale: detached.item.isStale)
            return zip(leftBox, rightBox).map { left, right in
                var line = left
                line.append(" ")
                line.segments += right.segments
                return line
            }
        case .expanded:
            guard let entry = scene.expanded else { return [] }
            let inner = min(columns - 4, 60)
            let layout = entry.layout
            var content = [
                spread(
                    layout.expandedLeading?.view.displayText ?? "", layout.expandedCenter?.view.displayText ?? "",
                    layout.expandedTrailing?.view.displayText ?? "", width: inner)
            ]
            var buttonNumber = [layout.expandedLeading, layout.expandedCenter, layout.expandedTrailing]
                .compactMap { $0?.view.buttons.count }.reduce(0, +)
            for row in layout.expandedBottom.map({ ViewRow.rows(of: $0.view) }) ?? [] {
                content.append(text(of: row, width: inner, buttonNumber: &buttonNumber))
            }
            content.append("")
            return box(content, innerWidth: inner, stale: entry.item.isStale)
        }
    }

    /// The alert under the island, for as long as it lasts: its title in bold, then its body.
    private func alertBox(_ alert: PresenterAlert) -> [StyledLine] {
        let inner = min(columns - 4, 60)
        // "🔔 " takes three cells of the line.
        let title = truncate(IslandScene.oneLine(alert.title), toWidth: inner - 3)
        let body = IslandScene.oneLine(alert.body)
        let bar = String(repeating: "─", count: inner + 2)
        var lines = [StyledLine("╭\(bar)╮", style: Self.islandStyle)]
        var titleLine = StyledLine("│ ", style: Self.islandStyle)
        titleLine.append("🔔 " + title, style: Self.islandStyle + ";1")
        titleLine.append(pad(inner - displayWidth(title) - 3) + " │", style: Self.islandStyle)
        lines.append(titleLine)
        // The body wraps onto a second line; the rest is cut.
        var first = ""
        for character in body {
            if displayWidth(first + String(character)) > inner { break }
            first.append(character)
        }
        if !first.isEmpty { lines.append(boxLine(first, inner: inner)) }
        let rest = body.dropFirst(first.count).drop { $0 == " " }
        if !rest.isEmpty { lines.append(boxLine(String(rest), inner: inner)) }
        lines.append(StyledLine("╰\(bar)╯", style: Self.islandStyle))
        return lines
    }

    private func boxLine(_ text: String, inner: Int) -> StyledLine {
        let cut = truncate(text, toWidth: inner)
        return StyledLine("│ \(cut)\(pad(inner - displayWidth(cut))) │", style: Self.islandStyle)
    }

    /// A rounded box in the island's colors around `content`, padded to `innerWidth`. A stale
    /// activity's box is dashed and faint, as the overlay dashes its outline and dims it.
    private func box(_ content: [String], innerWidth: Int, stale: Bool = false) -> [StyledLine] {
        let (across, down, style) = stale ? ("┄", "┆", Self.islandStyle + ";2") : ("─", "│", Self.islandStyle)
        let bar = String(repeating: across, count: innerWidth + 2)
        var lines = [StyledLine("╭\(bar)╮", style: style)]
        for text in content {
            let cut = truncate(text, toWidth: innerWidth)
            lines.append(StyledLine("\(down) \(cut)\(pad(innerWidth - displayWidth(cut))) \(down)", style: style))
        }
        lines.append(StyledLine("╰\(bar)╯", style: style))
        return lines
    }

    // MARK: Lock screen

    private func card(_ entry: IslandScene.Entry, selected: Bool) -> [StyledLine] {
        let inner = min(columns - 8, 70)
        var title = IslandScene.oneLine(entry.item.displayName)
        if let via = entry.item.viaText { title += " · " + IslandScene.oneLine(via) }
        // The app's icon as a glyph when one stands for it; a bullet would say nothing.
        if let icon = entry.item.appIcon, IconName.isValid(icon), RenderedView.glyph(forSymbol: icon) != RenderedView.unknownIconGlyph {
            title = RenderedView.glyph(forSymbol: icon) + " " + title
        }
        if entry.item.activityState != PresenterNames.Item.State.active { title += " · " + entry.item.activityState }
        title = truncate(title, toWidth: inner - 2)
        // What is no longer current (stale, ended) is faint: its title says which.
        let style =
            selected
            ? "1;36"
            : entry.item.activityState == PresenterNames.Item.State.active || entry.item.activityState == PresenterNames.Item.State.pending
                ? nil : "2"
        let marker = selected ? "▶ " : "  "
        var lines = [StyledLine("\(marker)╭─ \(title) \(String(repeating: "─", count: max(0, inner - displayWidth(title) - 1)))╮", style: style)]
        var rows = entry.layout.lockScreen.map { ViewRow.rows(of: $0.view) } ?? []
        if rows.isEmpty { rows = [.text(entry.item.type)] }
        var buttonNumber = 0
        for row in rows {
            let text = truncate(text(of: row, width: inner, buttonNumber: &buttonNumber), toWidth: inner)
            lines.append(StyledLine("  │ \(text)\(pad(inner - displayWidth(text))) │", style: style))
        }
        lines.append(StyledLine("  ╰\(String(repeating: "─", count: inner + 2))╯", style: style))
        return lines
    }

    /// A row as text: progress as a bar of block characters with its percentage, buttons
    /// numbered as the keys that press them.
    func text(of row: ViewRow, width: Int, buttonNumber: inout Int) -> String {
        switch row {
        case .text(let text):
            return text
        case .columns(let parts):
            return spreadColumns(parts, width: width)
        case .progress(let progress):
            let percent = "\(progress.percent)%"
            let barWidth = max(4, width - percent.count - 1)
            let filled = min(barWidth, Int((RenderedProgress.unit(progress.fraction) * Double(barWidth)).rounded(.down)))
            return String(repeating: "█", count: filled) + String(repeating: "░", count: barWidth - filled) + " " + percent
        case .buttons(let labels):
            return labels.map { label in
                buttonNumber += 1
                return buttonNumber <= 9 ? "[\(buttonNumber) \(label)]" : "[\(label)]"
            }.joined(separator: " ")
        }
    }

    // MARK: Helpers

    private func centred(_ line: StyledLine) -> StyledLine {
        var out = StyledLine(pad(max(0, (columns - line.width) / 2)))
        out.segments += line.segments
        return out
    }

    /// Leading at the left, center in the middle, trailing at the right of `width` cells.
    private func spread(_ leading: String, _ center: String, _ trailing: String, width: Int) -> String {
        let third = max(1, width / 3)
        let trailing = truncate(trailing, toWidth: center.isEmpty ? width / 2 : third)
        let leading = truncate(leading, toWidth: width - displayWidth(trailing) - (center.isEmpty ? 1 : third + 1))
        var line = leading
        if !center.isEmpty {
            let center = truncate(center, toWidth: max(1, width - displayWidth(leading) - displayWidth(trailing) - 2))
            let start = max(displayWidth(leading) + 1, (width - displayWidth(center)) / 2)
            line += pad(start - displayWidth(line)) + center
        }
        line += pad(max(1, width - displayWidth(line) - displayWidth(trailing))) + trailing
        return line
    }

    private func pad(_ count: Int) -> String { String(repeating: " ", count: max(0, count)) }
}
