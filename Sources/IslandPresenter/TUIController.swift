import IslandCore
import OrderedJSON

/// A key of the terminal presenter.
package enum TUIKey: Sendable, Hashable {
    case next, previous, expand, collapse, tap, dismiss, quit
    /// `1`…`9`: the Nth button of the expanded layout.
    case button(Int)

    /// The keys in a chunk of terminal input (arrows as `ESC [ C`/`ESC [ D`, or `ESC O C`/`D`).
    package static func parse(_ bytes: [UInt8]) -> [TUIKey] {
        var keys: [TUIKey] = []
        var index = 0
        while index < bytes.count {
            let byte = bytes[index]
            if byte == 0x1B, index + 2 < bytes.count, bytes[index + 1] == UInt8(ascii: "[") || bytes[index + 1] == UInt8(ascii: "O") {
                switch bytes[index + 2] {
                case UInt8(ascii: "C"), UInt8(ascii: "B"): keys.append(.next)
                case UInt8(ascii: "D"), UInt8(ascii: "A"): keys.append(.previous)
                case UInt8(ascii: "Z"): keys.append(.previous)  // shift-Tab
                default: break
                }
                index += 3
                continue
            }
            switch byte {
            case 0x09: keys.append(.next)
            case 0x0D, 0x0A: keys.append(.tap)
            case UInt8(ascii: "e"), UInt8(ascii: "E"): keys.append(.expand)
            case UInt8(ascii: "c"), UInt8(ascii: "C"): keys.append(.collapse)
            case UInt8(ascii: "d"), UInt8(ascii: "D"): keys.append(.dismiss)
            case UInt8(ascii: "q"), UInt8(ascii: "Q"), 0x03, 0x04: keys.append(.quit)
            case UInt8(ascii: "1")...UInt8(ascii: "9"): keys.append(.button(Int(byte - UInt8(ascii: "0"))))
            default: break
            }
            index += 1
        }
        return keys
    }
}

/// Where the terminal UI shows what a key acts on: the first row of the activity's card (or of
/// the island), and for a button its number.
package struct TUIPlacement: Hashable, Sendable {
    package var row: Int
    package var button: Int

    package init(row: Int, button: Int = 0) {
        self.row = row
        self.button = button
    }
}

/// The terminal presenter's state and behaviour, with its I/O injected: the model, the
/// selection in the lock-screen list, and what each key sends to the daemon.
///
/// A key acts for an app only on what the screen showed, standing still (`ClickGuard`): each
/// redraw records the targets of the keys — tap, expand, dismiss of the activity keys act on,
/// collapse, the numbered buttons — where they are drawn; one that appeared or moved less than
/// the settle time ago does nothing (app B's alert making B the activity ⏎ taps, or reordering
/// the list under the selection, a moment before the key).
package actor TUIController {
    package struct IO: Sendable {
        package var write: @Sendable (String) -> Void
        package var size: @Sendable () -> (columns: Int, rows: Int)
        package var clock: @Sendable () -> Double
        /// Opens a URL; false when nothing could open it.
        package var open: @Sendable (String) -> Bool
        package var interact: @Sendable (_ action: String, _ id: String?, _ button: String?) async throws -> String?
        /// The click guard's clock (`BootClock.now`), and how long what a key acts on must
        /// have stood still on screen.
        package var monotonic: @Sendable () -> Double
        package var settleTime: Double

        package init(
            write: @escaping @Sendable (String) -> Void, size: @escaping @Sendable () -> (columns: Int, rows: Int),
            clock: @escaping @Sendable () -> Double, open: @escaping @Sendable (String) -> Bool,
            interact: @escaping @Sendable (String, String?, String?) async throws -> String?,
            monotonic: @escaping @Sendable () -> Double = BootClock.now,
            settleTime: Double = ClickTarget.defaultSettleTime
        ) {
            self.write = write
            self.size = size
            self.clock = clock
            self.open = open
            self.interact = interact
            self.monotonic = monotonic
            self.settleTime = settleTime
        }
    }

    private let io: IO
    package private(set) var model = PresenterModel()
    private var selected: String?
    private var message: String?
    private var link = TerminalChrome.Link.connecting
    private var clickGuard: ClickGuard<ClickTarget, TUIPlacement>

    package init(io: IO) {
        self.io = io
        clickGuard = ClickGuard(settleTime: io.settleTime)
    }

    package func handle(_ event: SubscriptionLoop.Event) {
        switch event {
        case .update(let update):
            model.apply(update)
            if model.hasSnapshot { link = .connected }
        case .disconnected(let reason):
            model.reset()
            link = .lost(reason: reason)
        }
        redraw()
    }

    package func tick() {
        if IslandScene(model: model, now: io.clock()).isTicking { redraw() }
    }

    /// Handles a key; returns false for quit.
    package func press(_ key: TUIKey) async -> Bool {
        let list = model.island.lockScreen
        switch key {
        case .quit:
            return false
        case .next, .previous:
            guard !list.isEmpty else { break }
            let current = selectedID.flatMap { list.firstIndex(of: $0) }
            let step = key == .next ? 1 : -1
            let index = current.map { ($0 + step + list.count) % list.count } ?? (key == .next ? 0 : list.count - 1)
            selected = list[index]
        case .expand:
            guard let id = selectedID, settled(ClickTarget(id, "expand")) else { break }
            await send("expand", id: id)
        case .collapse:
            guard let id = model.island.expanded ?? selectedID, settled(ClickTarget(id, "collapse")) else { break }
            await send("collapse", id: id)
        case .tap:
            guard let id = selectedID, settled(ClickTarget(id, "tap")) else { break }
            do {
                if let url = try await io.interact("tap", id, nil) {
                    message = io.open(url) ? "opened \(url)" : "URL: \(url)"
                } else {
                    message = "tapped (no URL)"
                }
            } catch {
                message = "tap failed: \(SubscriptionLoop.describe(error))"
            }
        case .dismiss:
            guard let id = selectedID, settled(ClickTarget(id, "dismiss")) else { break }
            await send("dismiss", id: id)
            if selected == id { selected = nil }
        case .button(let number):
            let target = model.expanded ?? model.item(selectedID)
            let buttons = target.map { IslandScene.Entry(item: $0, now: io.clock()).layout.expandedButtons } ?? []
            guard let target, number >= 1, number <= buttons.count else {
                message = "no button \(number)"
                break
            }
            guard settled(ClickTarget(target.id, "button:" + buttons[number - 1].action)) else { break }
            await send("button", id: target.id, button: buttons[number - 1].action)
        }
        redraw()
        return true
    }

    /// The activity keys act on: the one selected in the list, else the expanded or attached one.
    var selectedID: String? {
        if let selected, model.items[selected] != nil { return selected }
        return model.island.expanded ?? model.island.attached ?? model.island.lockScreen.first
    }

    /// Whether the key's target has stood still on screen; if not, says so instead.
    private func settled(_ target: ClickTarget) -> Bool {
        if clickGuard.isActionable(target, at: io.monotonic()) { return true }
        message = "\(target.action.hasPrefix("button:") ? "button" : target.action) not sent: what it acts on changed just now (press again)"
        return false
    }

    /// What each key acts on in this frame, where it is drawn; the activity's buttons as `scene`
    /// (the frame's, of the same model at `now`) rendered them, when given.
    static func targets(
        model: PresenterModel, selectedID: String?, places: TerminalFrame.Places, now: Double, scene: IslandScene? = nil
    ) -> [ClickTarget: TUIPlacement] {
        var targets: [ClickTarget: TUIPlacement] = [:]
        let islandID = model.island.mode == .none ? nil : model.island.expanded ?? model.island.attached
        func row(_ id: String) -> Int? { places.cards[id] ?? (id == islandID ? places.island : nil) }
        if let id = selectedID, let row = row(id) {
            for action in ["expand", "tap", "dismiss"] { targets[ClickTarget(id, action)] = TUIPlacement(row: row) }
        }
        if let id = model.island.expanded ?? selectedID, let row = (model.island.expanded != nil ? places.island : nil) ?? row(id) {
            targets[ClickTarget(id, "collapse")] = TUIPlacement(row: row)
        }
        if let item = model.expanded ?? model.item(selectedID), let row = (model.expanded != nil ? places.island : nil) ?? row(item.id) {
            let entry = scene?.entry(item.id) ?? IslandScene.Entry(item: item, now: now)
            for (index, button) in entry.layout.expandedButtons.prefix(9).enumerated() {
                let target = ClickTarget(item.id, "button:" + button.action)
                if targets[target] == nil { targets[target] = TUIPlacement(row: row, button: index + 1) }
            }
        }
        return targets
    }

    private func send(_ action: String, id: String?, button: String? = nil) async {
        do {
            _ = try await io.interact(action, id, button)
            message = button.map { "\(action) \($0)" } ?? action
        } catch {
            message = "\(action) failed: \(SubscriptionLoop.describe(error))"
        }
    }

    /// Draws the whole screen.
    package func redraw() {
        let (columns, rows) = io.size()
        let frame = TerminalFrame(columns: columns, rows: rows)
        let scene = IslandScene(model: model, now: io.clock())
        let chrome = TerminalChrome(
            selected: model.island.lockScreen.count > 1 || selected != nil ? selectedID : nil,
            message: message, link: link)
        let (lines, places) = frame.layout(scene, chrome: chrome)
        var out = "\u{1B}[H"
        for (index, line) in lines.enumerated() {
            out += "\u{1B}[\(index + 1);1H" + line.ansi(columns: frame.columns) + "\u{1B}[K"
        }
        io.write(out)
        // After the frame is out: a key pressed before it is about the frame before.
        clickGuard.shown(
            Self.targets(model: model, selectedID: selectedID, places: places, now: scene.now, scene: scene), at: io.monotonic())
    }
}
