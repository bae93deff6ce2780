package import IslandCore
package import OrderedJSON
import Foundation
import OrderedCollections

#if canImport(Glibc)
import Glibc
#endif

/// What a click, a bar's `on-click` or a key acts on: an activity and its action (`tap`,
/// `expand`, `collapse`, `dismiss`, `button:<name>`). The same action of another activity is
/// another target, so `ClickGuard` sees app B taking A's place as something new.
package struct ClickTarget: Hashable, Sendable, CustomStringConvertible {
    package var id: String
    package var action: String

    package init(_ id: String, _ action: String) {
        self.id = id
        self.action = action
    }

    package var description: String { "\(action) \(id)" }

    /// `ClickGuard`'s default settle time, for the presenters' defaults.
    package static var defaultSettleTime: Double { ClickGuard<ClickTarget, Int>.defaultSettleTime }
}

/// The clock the presenters' click guards run on: CLOCK_BOOTTIME, in seconds. Monotonic, and the
/// same in every process of the machine, so a time a bar presenter recorded means the same in
/// the `click` process the bar starts (and in Python's `time.clock_gettime(CLOCK_BOOTTIME)`);
/// and the clock of a process's start time in /proc, which is when a bar's click happened as
/// nearly as that process can know (`processStart`).
package enum BootClock {
    @Sendable package static func now() -> Double {
        var time = timespec()
        clock_gettime(CLOCK_BOOTTIME, &time)
        return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
    }

    /// When this process was started (forked), from /proc/self/stat: for `island-presenter
    /// click`, the earliest moment after the click it can know. A click is judged at this time,
    /// not when the process gets to decide: a loaded machine that takes a second to start it
    /// must not let the click act on what appeared a moment before it. Nil where /proc says
    /// nothing.
    package static func processStart() -> Double? {
        guard let data = FileManager.default.contents(atPath: "/proc/self/stat") else { return nil }
        let ticks = sysconf(Int32(_SC_CLK_TCK))
        guard ticks > 0 else { return nil }
        return startTime(stat: String(decoding: data, as: UTF8.self), ticksPerSecond: Double(ticks))
    }

    /// The start time (field 22, in clock ticks since boot) of a /proc/PID/stat line, in
    /// seconds. The command name (field 2) is in parentheses and may hold spaces and ")": the
    /// fields are counted from the last ")".
    static func startTime(stat: String, ticksPerSecond: Double) -> Double? {
        guard let close = stat.lastIndex(of: ")") else { return nil }
        let fields = stat[stat.index(after: close)...].split(separator: " ", omittingEmptySubsequences: true)
        // fields[0] is field 3 (the state).
        guard fields.count > 19, let ticks = UInt64(fields[19]) else { return nil }
        return Double(ticks) / ticksPerSecond
    }
}

/// How long a presenter's targets must stand still before a click acts on them: the shared
/// default, or longer when `ISLAND_PRESENTER_CLICK_SETTLE` (seconds) says so. The variable is
/// for tests on a loaded machine, where starting a `click` process may take longer than the
/// default; it can lengthen the wait, never shorten or disable it.
package func clickSettleTime(environment: [String: String]) -> Double {
    let minimum = ClickTarget.defaultSettleTime
    guard let value = environment["ISLAND_PRESENTER_CLICK_SETTLE"].flatMap(Double.init), value.isFinite else { return minimum }
    return max(minimum, min(value, 3600))
}

/// What a bar presenter has put out, as the clicks on it see it: the activity a click on the
/// bar acts on and, per action, when it becomes actionable (`ClickGuard.actionableAt`, on
/// `BootClock`).
///
/// A bar's `on-click` runs `island-presenter click` as a process of its own, some time after
/// the bar drew the line: each bar presenter writes this record, a file of its own
/// (`directory(runtimeDirectory:)`, `fileName(socket:pid:)`), whenever what it shows changes,
/// and the click acts only on what the records of the running bar presenters say was shown,
/// once it has stood still, and only if the daemon's island still agrees
/// (`decide(_:records:island:at:)`). i3blocks' clicks, which reach the presenter itself, use
/// its record from memory.
package struct BarShown: Sendable, Hashable {
    /// The presenter that wrote it (a record of one that has exited is no record).
    package var pid: Int32
    /// The activity the bar's line is about; nil when a click on it acts for no app.
    package var id: String?
    /// Action → when it may be clicked.
    package var actionableAt: [String: Double]

    package init(pid: Int32, id: String?, actionableAt: [String: Double]) {
        self.pid = pid
        self.id = id
        self.actionableAt = actionableAt
    }

    /// What a click on a bar showing `scene` may act on, each at its place in the line: the
    /// island's activity (the expanded one, else the attached one), at the line's start. While
    /// an alert of another activity is the text, nothing: the line shows that one's words.
    package static func targets(of scene: IslandScene) -> [ClickTarget: Int] {
        guard let primary = scene.primary else { return [:] }
        let id = primary.item.id
        if let alert = scene.alert, alert.id != id { return [:] }
        let toggle = scene.mode == .expanded ? "collapse" : "expand"
        return [ClickTarget(id, toggle): 0, ClickTarget(id, "tap"): 0, ClickTarget(id, "dismiss"): 0]
    }

    /// The record of `guard` for `targets` (those of one activity).
    package static func record(pid: Int32, targets: some Collection<ClickTarget>, guard clickGuard: ClickGuard<ClickTarget, Int>) -> BarShown {
        var times: [String: Double] = [:]
        for target in targets { times[target.action] = clickGuard.actionableAt(target) }
        return BarShown(pid: pid, id: targets.first?.id, actionableAt: times)
    }

    package enum Decision: Sendable, Hashable {
        case act(action: String, id: String)
        /// Why not, for the user.
        case refuse(String)
    }

    /// Whether `click` at `now` acts, and on what: only on the activity the bar showed, with
    /// an action it showed (a toggle is what the shown island's state made it), once that has
    /// stood still for the settle time, and only while the daemon's island is still that
    /// (otherwise the bar is about to draw something else).
    package func decide(_ click: BarClick, island: IslandState, at now: Double) -> Decision {
        guard let id else { return .refuse("the bar shows no activity to act on") }
        let action: String
        switch click {
        case .list: return .refuse("list acts for no activity")
        case .toggle: action = actionableAt["collapse"] != nil ? "collapse" : "expand"
        // A bar draws no buttons: pressing one (a key binding) waits until the bar's activity
        // has stood still as a whole, which the time of its tap says.
        case .button: action = "tap"
        default: action = click.rawValue
        }
        guard let at = actionableAt[action] else { return .refuse("the bar shows no \(action) for its activity") }
        guard now >= at else { return .refuse("what the bar shows changed just now; not acting on it (click again)") }
        guard let current = click.interaction(on: island), current.id == id, click == .button || current.action == action else {
            return .refuse("the island changed since the bar drew it; not acting on it (click again)")
        }
        return .act(action: current.action, id: id)
    }

    /// A click with the records of every bar presenter running for the daemon (two monitors,
    /// two bars): it acts only when each would act, on the same thing. Nil when there is no
    /// record (no bar presenter runs: a key binding alone), for the caller to act on the
    /// island as the daemon has it.
    package static func decide(_ click: BarClick, records: [BarShown], island: IslandState, at now: Double) -> Decision? {
        guard !records.isEmpty else { return nil }
        let decisions = records.map { $0.decide(click, island: island, at: now) }
        if let refusal = decisions.first(where: { if case .refuse = $0 { true } else { false } }) { return refusal }
        guard Set(decisions).count == 1 else { return .refuse("the bars show different activities; not acting (click again)") }
        return decisions[0]
    }

    // MARK: The record on disk

    package var json: JSON {
        var object: JSONObject = ["pid": .int(Int(pid))]
        if let id { object["id"] = .string(id) }
        var times: JSONObject = [:]
        for action in actionableAt.keys.sorted() { times[action] = .double(actionableAt[action]!) }
        object["actionableAt"] = .object(times)
        return .object(object)
    }

    package init?(json: JSON) {
        guard let object = json.objectValue, let pid = object["pid"]?.intValue, let pid = Int32(exactly: pid) else { return nil }
        var times: [String: Double] = [:]
        for (action, value) in object["actionableAt"]?.objectValue ?? [:] {
            guard let time = value.doubleValue else { return nil }
            times[action] = time
        }
        self.init(pid: pid, id: object["id"]?.stringValue, actionableAt: times)
    }

    /// The record as a file holds it.
    package var serialized: [UInt8] { Array(json.serialized()) }

    /// The most a record file is read: a record holds a pid, an activity id the daemon made and
    /// a time for each thing a click may do, a few hundred bytes.
    package static let maximumRecordBytes = 64 << 10

    /// A record read from a file; nil when it is not one.
    package init?(serialized bytes: [UInt8]) {
        guard let json = try? JSONParser.parse(bytes) else { return nil }
        self.init(json: json)
    }

    /// Where bar presenters keep their records: in the user's runtime directory (never the
    /// daemon's, which may not be the user's).
    package static func directory(runtimeDirectory: String) -> String { runtimeDirectory + "/island-presenter" }

    /// The file names of the records of the bar presenters of the daemon at `socket` start
    /// with this: `bar-<FNV-1a of the socket path>-`.
    package static func filePrefix(socket: String) -> String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in socket.utf8 { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3 }
        return "bar-" + String(hash, radix: 16) + "-"
    }

    /// The record file of the bar presenter `pid` for the daemon at `socket`.
    package static func fileName(socket: String, pid: Int32) -> String { filePrefix(socket: socket) + "\(pid).json" }
}

// MARK: The click's decision

extension BarClick {
    /// What a click made at `clickedAt` (on `BootClock`) comes to, with `model` the daemon's
    /// snapshot at `now`: the `Interact` call to make, or why none is made (for the user).
    /// `button`: the button's action, for `button`; `activity`: the button of this activity,
    /// named by the user, rather than the island's; `shown`: the records of the bar presenters
    /// running for the daemon (none: a key binding alone, which acts on the island as the
    /// daemon has it). `list` is no call: the caller opens the list.
    package func decide(
        button: String?, activity: String?, model: PresenterModel, shown: [BarShown],
        clickedAt: Double, now: Double
    ) -> BarShown.Decision {
        let interaction: String, id: String
        if let activity {
            // Named by the user: what the island or a bar shows now does not choose it.
            (interaction, id) = (rawValue, activity)
        } else {
            guard let (islandInteraction, islandID) = self.interaction(on: model.island) else {
                return .refuse("the island shows nothing")
            }
            (interaction, id) = (islandInteraction, islandID)
            switch BarShown.decide(self, records: shown, island: model.island, at: clickedAt) {
            case .act, nil: break  // the same action and activity as the island's, checked there; or no bar runs
            case .refuse(let reason): return .refuse(reason)
            }
        }
        if let button, let refusal = Self.buttonRefusal(button, of: activity, scene: IslandScene(model: model, now: now)) {
            return .refuse(TerminalText.display(refusal))
        }
        return .act(action: interaction, id: id)
    }

    /// Why the island's activity (or `activity`, when given) has no button `action` to press;
    /// nil when it has. The activity is named by its app and title as well as its id.
    package static func buttonRefusal(_ action: String, of activity: String? = nil, scene: IslandScene) -> String? {
        let lookup = scene.button(action, of: activity)
        func named(_ id: String) -> String { scene.entry(id).map(IslandScene.naming) ?? "activity \(id)" }
        switch lookup {
        case .found: return nil
        case .noActivity:
            return activity.map { "no activity \($0) on the island or in its list (no button \(action) to press)" }
                ?? "the island shows nothing"
        case .ended(let id): return "\(named(id)) has ended: its buttons act no more"
        case .missing(let id, let available) where available.isEmpty: return "\(named(id)) has no buttons (no button \(action))"
        case .missing(let id, let available):
            return "\(named(id)) has no button \(action); its buttons: \(available.joined(separator: ", "))"
        }
    }
}
