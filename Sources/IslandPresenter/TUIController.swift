import IslandJSON

/// A key of the terminal presenter.
public enum TUIKey: Sendable, Hashable {
    case next, previous, expand, collapse, tap, dismiss, quit
    /// `1`…`9`: the Nth button of the expanded layout.
    case button(Int)

    /// The keys in a chunk of terminal input (arrows as `ESC [ C`/`ESC [ D`, or `ESC O C`/`D`).
    public static func parse(_ bytes: [UInt8]) -> [TUIKey] {
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

/// The terminal presenter's state and behaviour, with its I/O injected: the model, the
/// selection in the lock-screen list, and what each key sends to the daemon.
public actor TUIController {
    public struct IO: Sendable {
        public var write: @Sendable (String) -> Void
        public var size: @Sendable () -> (columns: Int, rows: Int)
        public var clock: @Sendable () -> Double
        /// Opens a URL; false when nothing could open it.
        public var open: @Sendable (String) -> Bool
        public var interact: @Sendable (_ action: String, _ id: String?, _ button: String?) async throws -> String?

        public init(write: @escaping @Sendable (String) -> Void, size: @escaping @Sendable () -> (columns: Int, rows: Int),
                    clock: @escaping @Sendable () -> Double, open: @escaping @Sendable (String) -> Bool,
                    interact: @escaping @Sendable (String, String?, String?) async throws -> String?) {
            self.write = write
            self.size = size
            self.clock = clock
            self.open = open
            self.interact = interact
        }
    }

    private let io: IO
    public private(set) var model = PresenterModel()
    private var selected: String?
    private var message: String?
    private var disconnected: String? = "connecting"

    public init(io: IO) { self.io = io }

    public func handle(_ event: SubscriptionLoop.Event) {
        switch event {
        case .update(let update):
            model.apply(update)
            if model.hasSnapshot { disconnected = nil }
        case .disconnected(let reason):
            model.reset()
            disconnected = reason
        }
        redraw()
    }

    public func tick() {
        if IslandScene(model: model, now: io.clock()).isTicking { redraw() }
    }

    /// Handles a key; returns false for quit.
    public func press(_ key: TUIKey) async -> Bool {
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
            await send("expand", id: selectedID)
        case .collapse:
            await send("collapse", id: model.island.expanded ?? selectedID)
        case .tap:
            guard let id = selectedID else { break }
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
            let id = selectedID
            await send("dismiss", id: id)
            if selected == id { selected = nil }
        case .button(let number):
            let target = model.expanded ?? model.item(selectedID)
            let buttons = target.map { IslandScene.Entry(item: $0, now: io.clock()).layout.expandedButtons } ?? []
            guard let target, number >= 1, number <= buttons.count else {
                message = "no button \(number)"
                break
            }
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

    private func send(_ action: String, id: String?, button: String? = nil) async {
        do {
            _ = try await io.interact(action, id, button)
            message = button.map { "\(action) \($0)" } ?? action
        } catch {
            message = "\(action) failed: \(SubscriptionLoop.describe(error))"
        }
    }

    /// Draws the whole screen.
    public func redraw() {
        let (columns, rows) = io.size()
        let frame = TerminalFrame(columns: columns, rows: rows)
        let scene = IslandScene(model: model, now: io.clock())
        let chrome = TerminalChrome(selected: model.island.lockScreen.count > 1 || selected != nil ? selectedID : nil,
                                    message: message, disconnected: disconnected)
        var out = "\u{1B}[H"
        for (index, line) in frame.render(scene, chrome: chrome).enumerated() {
            out += "\u{1B}[\(index + 1);1H" + line.ansi(columns: frame.columns) + "\u{1B}[K"
        }
        io.write(out)
    }
}
