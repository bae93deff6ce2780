package import FreeDesktop
package import OrderedJSON
import IslandProtocol

/// The bridge's side of its activities: what its sources want shown, what the daemon holds,
/// and the calls that bring one to the other. Pure: the shell feeds it what sources and the
/// daemon say (with the time), runs the commands it hands out, and reports their outcomes.
///
/// Its rules:
/// * **One call in flight per activity, the latest content wins.** While a request or an
///   update is on its way, newer content only replaces what is waiting; nothing queues
///   beyond one pending state per thing followed, however fast a source changes (the
///   daemon's own update budget coalesces further).
/// * **At most `capacity` live activities** (the daemon's `MaxActivitiesPerApp`, or less by
///   configuration): the highest `Rank`s are shown; when a higher one arrives at the limit
///   the lowest is ended at once to make room, and comes back when there is room again.
/// * **Refusals are not retried in a loop**: each holds what it refused for a while (the
///   start budget's `retryAfter`, 30 s for the limits) and is reported once until something
///   succeeds again; `Denied` and `Unentitled` stop everything until the daemon says the
///   bridge is enabled again. A daemon out of reach holds everything, with a backoff.
/// * **No duplicates**: each activity is requested with a key of its own, reused when the
///   request is retried, and activities a previous run of the bridge left are adopted by the
///   source recorded in their attributes, or ended.
package struct ActivityBook: Sendable {
    /// Whether the daemon lets the bridge show activities.
    package enum Authorization: Sendable, Hashable {
        case unknown
        case enabled
        /// `Denied` (the user turned the bridge off) or `Unentitled` (no manifest).
        case refused(String)
    }

    package enum Command: Sendable, Hashable {
        case request(Ticket, key: String, type: String, attributes: JSONObject, content: BridgedContent)
        case update(Ticket, id: String, content: BridgedContent)
        case end(Ticket, id: String, content: BridgedContent?, dismissal: Dismissal)
    }

    /// Names one command, so that its outcome finds its way back.
    package struct Ticket: Sendable, Hashable {
        package var source: String
        package var serial: UInt64
    }

    package enum Outcome: Sendable, Hashable {
        /// The daemon holds activity `id` for the request (new, or found by its key).
        case requested(id: String, ended: Bool, content: BridgedContent)
        case updated
        case ended
        /// The daemon could not be reached; the call may be retried.
        case unavailable
        case refused(Refusal)
    }

    package enum Refusal: Sendable, Hashable {
        case denied
        case unentitled(String)
        case targetMaximum(limit: Int)
        case globalMaximum(limit: Int)
        case startBudget(retryAfter: Double)
        case noSuchActivity
        /// The activity has ended or been dismissed: by the user, unless we missed why.
        case activityEnded
        case other(name: String, detail: String)
    }

    /// Something worth a line in the log, said once.
    package struct Notice: Sendable, Hashable {
        package enum Level: Sendable, Hashable { case info, warning }
        package var level: Level
        package var message: String
    }

    /// An activity a previous run left, as `List` reports it.
    package struct Listed: Sendable, Hashable {
        package var id: String
        package var source: String?
        package var content: BridgedContent

        package init(id: String, source: String?, content: BridgedContent) {
            self.id = id
            self.source = source
            self.content = content
        }
    }

    private struct Entry: Sendable {
        var desired: BridgedActivity
        var finish: Dismissal?
        var finalContent: BridgedContent?
        var id: String?
        /// What the daemon holds (the last content it accepted).
        var delivered: BridgedContent?
        /// Content the daemon refused (too large…): not sent again until it changes.
        var rejected: BridgedContent?
        var requestKey: String?
        var inFlight: InFlight?
        var heldUntil: Double?
        /// The user dismissed it: not shown again while the thing lasts.
        var suppressed = false
    }

    private struct InFlight: Sendable {
        enum Kind: Sendable { case request, update, end }
        var ticket: Ticket
        var kind: Kind
        var content: BridgedContent?
    }

    package private(set) var authorization: Authorization = .unknown
    package private(set) var capacity: Int
    private var configuredCapacity: Int
    private var daemonCapacity: Int?
    private var entries: [String: Entry] = [:]
    private var unclaimed: [String: Listed] = [:]
    private var unclaimedEnding: [String: Ticket] = [:]
    private var settled = false
    private var serial: UInt64 = 0
    private let instance: String
    private var startsHeldUntil: Double?
    private var unavailableUntil: Double?
    /// Calls that found islandd unreachable since it last answered, for `unavailableRetry`.
    private var unavailableAttempts = 0
    private var noticed: Set<String> = []
    private var notices: [Notice] = []

    /// Holds for refusals that say nothing about when to try again.
    package static let limitHold = 30.0
    package static let otherHold = 60.0
    /// The holds after islandd is found unreachable: doubling from a second to half a minute.
    package static let unavailableRetry = Backoff(first: .seconds(1), maximum: .seconds(30))

    /// `capacity` as configured; `instance` makes this run's request keys its own.
    package init(capacity: Int, instance: String) {
        configuredCapacity = max(1, capacity)
        self.capacity = configuredCapacity
        self.instance = instance
    }

    /// A new configured capacity (the daemon's limit still caps it).
    package mutating func configure(capacity: Int) {
        configuredCapacity = max(1, capacity)
        self.capacity = max(1, min(configuredCapacity, daemonCapacity ?? configuredCapacity))
    }

    // MARK: What sources say

    /// Shows `activity`, or brings it up to date.
    package mutating func show(_ activity: BridgedActivity) {
        if var entry = entries[activity.source] {
            guard entry.finish == nil else { return }
            entry.desired = activity
            entries[activity.source] = entry
            return
        }
        var entry = Entry(desired: activity)
        if let adopted = unclaimed.removeValue(forKey: activity.source) {
            entry.id = adopted.id
            entry.delivered = adopted.content
        }
        entries[activity.source] = entry
    }

    /// The source's thing ended: its activity ends with `content` (or the last one) and
    /// `dismissal`; an activity never shown is simply forgotten.
    package mutating func finish(_ source: String, content: BridgedContent?, dismissal: Dismissal) {
        guard var entry = entries[source], entry.finish == nil else { return }
        entry.finish = dismissal
        entry.finalContent = content
        entries[source] = entry
    }

    /// Whether `source` is followed and not finished.
    package func isShowing(_ source: String) -> Bool {
        entries[source].map { $0.finish == nil } ?? false
    }

    /// The source of activity `id`, for routing a tap or a button press.
    package func source(ofActivity id: String) -> String? {
        entries.first { $0.value.id == id }?.key
    }

    /// The sources followed, finished or not.
    package var sources: [String] { Array(entries.keys) }

    // MARK: What the daemon says

    /// The bridge's authorization, and its `MaxActivitiesPerApp`.
    package mutating func authorized(enabled: Bool, maximumActivities: Int?) {
        if let maximumActivities {
            daemonCapacity = maximumActivities
            capacity = max(1, min(configuredCapacity, maximumActivities))
        }
        if enabled {
            if authorization != .enabled {
                // Turned back on: what the switch ended (as the user's) may show again.
                for source in entries.keys { entries[source]?.suppressed = false }
                noticed.remove("authorization")
            }
            authorization = .enabled
        } else if case .refused = authorization {
        } else {
            refuse("turned off by the user (org.island.Denied)")
        }
    }

    /// Activities a previous run left (live ones, as `List` reports them): each is adopted
    /// by the source that shows the same thing, or ended once `settle()` says every source
    /// has shown what it follows.
    package mutating func adopt(_ listed: [Listed]) {
        let known = Set(entries.values.compactMap(\.id))
        for activity in listed where !known.contains(activity.id) {
            if let source = activity.source, var entry = entries[source], entry.id == nil, entry.inFlight == nil {
                entry.id = activity.id
                entry.delivered = activity.content
                entries[source] = entry
            } else {
                unclaimed[activity.source ?? activity.id] = activity
            }
        }
    }

    /// Every source has shown what it follows now: unclaimed adopted activities are orphans.
    package mutating func settle() {
        settled = true
    }

    /// The daemon ended or dismissed activity `id` (an event of the watch stream); `reason` is
    /// its end reason.
    package mutating func daemonEnded(id: String, reason: String?) {
        guard let source = source(ofActivity: id), var entry = entries[source] else { return }
        // Our own End: its outcome settles the entry.
        if entry.inFlight?.kind == .end { return }
        entry.id = nil
        entry.delivered = nil
        entry.requestKey = nil
        if reason == ProducerNames.Activity.EndReason.user { entry.suppressed = true }
        if entry.finish != nil, entry.inFlight == nil {
            entries[source] = nil
        } else {
            entries[source] = entry
        }
    }

    /// The daemon came back (a restart): what it holds may be stale, so each shown activity
    /// gets its content again.
    package mutating func daemonReconnected() {
        for source in entries.keys where entries[source]?.id != nil {
            entries[source]?.delivered = nil
        }
    }

    // MARK: Commands and outcomes

    /// The calls to make now. Each has a ticket; report its outcome with `completed`.
    package mutating func commands(now: Double) -> [Command] {
        guard authorization == .enabled else { return [] }
        if let until = unavailableUntil, until > now { return [] }
        var commands: [Command] = []

        // Orphans of a previous run.
        if settled {
            for (key, orphan) in unclaimed where unclaimedEnding[key] == nil {
                let ticket = nextTicket(source: "orphan:" + key)
                unclaimedEnding[key] = ticket
                commands.append(.end(ticket, id: orphan.id, content: nil, dismissal: .immediate))
            }
        }

        let wanted = Set(wantedSources(now: now))
        var live = entries.values.count { $0.id != nil || $0.inFlight?.kind == .request } + unclaimed.count

        for source in entries.keys.sorted() {
            guard var entry = entries[source], entry.inFlight == nil else { continue }
            if let dismissal = entry.finish {
                if let id = entry.id {
                    let content = entry.finalContent ?? entry.desired.content
                    entry.inFlight = InFlight(ticket: nextTicket(source: source), kind: .end, content: content)
                    commands.append(.end(entry.inFlight!.ticket, id: id, content: content, dismissal: dismissal))
                    entries[source] = entry
                } else {
                    entries[source] = nil
                }
                continue
            }
            if let id = entry.id {
                if !wanted.contains(source) {
                    // Evicted: the room goes to a higher rank.
                    entry.inFlight = InFlight(ticket: nextTicket(source: source), kind: .end, content: nil)
                    commands.append(.end(entry.inFlight!.ticket, id: id, content: nil, dismissal: .immediate))
                } else if entry.delivered != entry.desired.content, entry.rejected != entry.desired.content,
                    (entry.heldUntil ?? now) <= now
                {
                    entry.inFlight = InFlight(ticket: nextTicket(source: source), kind: .update, content: entry.desired.content)
                    commands.append(.update(entry.inFlight!.ticket, id: id, content: entry.desired.content))
                }
                entries[source] = entry
                continue
            }
            guard wanted.contains(source), live < capacity, (entry.heldUntil ?? now) <= now,
                (startsHeldUntil ?? now) <= now, entry.rejected != entry.desired.content
            else { continue }
            serial += 1
            let key = entry.requestKey ?? "\(source)@\(instance).\(serial)"
            entry.requestKey = key
            entry.inFlight = InFlight(ticket: nextTicket(source: source), kind: .request, content: entry.desired.content)
            commands.append(
                .request(
                    entry.inFlight!.ticket, key: key, type: entry.desired.type,
                    attributes: entry.desired.attributes, content: entry.desired.content))
            entries[source] = entry
            live += 1
        }
        return commands
    }

    /// The sources that may be shown: the `capacity` highest ranks of those not suppressed
    /// and not held back by a refusal.
    private func wantedSources(now: Double) -> [String] {
        entries.filter { _, entry in
            guard entry.finish == nil, !entry.suppressed else { return false }
            if entry.id == nil, (entry.heldUntil ?? now) > now || entry.rejected == entry.desired.content { return false }
            return true
        }
        .sorted { ($0.value.desired.rank, $0.key) > ($1.value.desired.rank, $1.key) }
        .prefix(capacity).map(\.key)
    }

    private mutating func nextTicket(source: String) -> Ticket {
        serial += 1
        return Ticket(source: source, serial: serial)
    }

    /// What became of a command.
    package mutating func completed(_ ticket: Ticket, _ outcome: Outcome, now: Double) {
        if ticket.source.hasPrefix("orphan:") {
            let key = String(ticket.source.dropFirst("orphan:".count))
            guard unclaimedEnding[key] == ticket else { return }
            unclaimedEnding[key] = nil
            switch outcome {
            case .unavailable: becameUnavailable(now: now)
            case .refused(let refusal) where !refusal.meansGone: handle(refusal, for: nil, now: now)
            default: unclaimed[key] = nil
            }
            return
        }
        guard var entry = entries[ticket.source], let flight = entry.inFlight, flight.ticket == ticket else { return }
        entry.inFlight = nil
        switch outcome {
        case .requested(let id, let ended, let content):
            recovered(["target", "global", "budget"])
            if ended {
                // The key belongs to an activity that ended: the next request takes a new one.
                entry.requestKey = nil
            } else {
                entry.id = id
                entry.delivered = content
                entry.heldUntil = nil
            }
        case .updated:
            recovered()
            entry.delivered = flight.content
            entry.rejected = nil
        case .ended:
            recovered()
            if entry.finish != nil {
                entries[ticket.source] = nil
                return
            }
            entry.id = nil
            entry.delivered = nil
            entry.requestKey = nil
        case .unavailable:
            becameUnavailable(now: now)
        case .refused(let refusal):
            switch refusal {
            case .noSuchActivity, .activityEnded:
                if entry.finish != nil {
                    entries[ticket.source] = nil
                    return
                }
                entry.id = nil
                entry.delivered = nil
                entry.requestKey = nil
                // Ended without our knowing why: maybe by the user, so not shown again.
                if refusal == .activityEnded { entry.suppressed = true }
            case .other:
                entry.rejected = flight.content
                entry.heldUntil = now + Self.otherHold
                handle(refusal, for: ticket.source, now: now)
            case .denied, .unentitled:
                // Every entry is reset, this one too.
                handle(refusal, for: ticket.source, now: now)
                return
            case .startBudget:
                // Every request waits for the budget; this one needs no hold of its own.
                handle(refusal, for: ticket.source, now: now)
            default:
                entry.heldUntil = now + Self.limitHold
                handle(refusal, for: ticket.source, now: now)
            }
        }
        entries[ticket.source] = entry
    }

    private mutating func handle(_ refusal: Refusal, for source: String?, now: Double) {
        switch refusal {
        case .denied:
            refuse("turned off by the user (org.island.Denied); waiting until it is turned on again")
        case .unentitled(let reason):
            refuse("not entitled (org.island.Unentitled: \(reason)); install org.island.bridge.desktop and reload islandd")
        case .targetMaximum(let limit):
            capacity = max(1, min(capacity, limit))
            notice(
                .warning, key: "target", "the daemon allows the bridge \(limit) live activities (MaxActivitiesPerApp); showing the \(capacity) most relevant")
        case .globalMaximum(let limit):
            notice(
                .warning, key: "global",
                "all apps together have the daemon's maximum of \(limit) live activities; holding new ones for \(Int(Self.limitHold)) s")
        case .startBudget(let retryAfter):
            startsHeldUntil = now + max(1, retryAfter)
            notice(.warning, key: "budget", "the daemon's start budget is spent; the next activity starts in \(Int(max(1, retryAfter).rounded(.up))) s")
        case .other(let name, let detail):
            notice(.warning, key: "other:" + name, "the daemon refused \(source ?? "a call"): \(name) \(detail)")
        case .noSuchActivity, .activityEnded:
            break
        }
    }

    private mutating func refuse(_ reason: String) {
        authorization = .refused(reason)
        // The daemon ended every activity of a disabled app; none was made for an unentitled one.
        for source in entries.keys {
            if entries[source]?.finish != nil {
                entries[source] = nil
                continue
            }
            entries[source]?.id = nil
            entries[source]?.delivered = nil
            entries[source]?.requestKey = nil
            entries[source]?.inFlight = nil
        }
        unclaimed = [:]
        unclaimedEnding = [:]
        notice(.warning, key: "authorization", reason)
    }

    private mutating func becameUnavailable(now: Double) {
        unavailableUntil = now + Self.unavailableRetry.seconds(attempt: unavailableAttempts)
        unavailableAttempts += 1
        notice(.warning, key: "unavailable", "islandd is not reachable; retrying")
    }

    /// A call went through: the daemon is back, and the notices of `kinds` may be said again.
    private mutating func recovered(_ kinds: [String] = []) {
        unavailableAttempts = 0
        unavailableUntil = nil
        noticed.remove("unavailable")
        for kind in kinds { noticed.remove(kind) }
    }

    private mutating func notice(_ level: Notice.Level, key: String, _ message: String) {
        guard noticed.insert(key).inserted else { return }
        notices.append(Notice(level: level, message: message))
    }

    /// The notices since the last call: each kind is said once, until what it reported
    /// changed (a request went through, the daemon came back, the bridge was enabled).
    package mutating func takeNotices() -> [Notice] {
        defer { notices = [] }
        return notices
    }

    /// When `commands(now:)` may have something new without any other event: the end of a
    /// hold that keeps a command back. Nil when nothing waits for time.
    package var nextDeadline: Double? {
        guard authorization == .enabled else { return nil }
        var deadlines: [Double] = []
        if let unavailableUntil { deadlines.append(unavailableUntil) }
        let waiting = entries.values.contains { $0.inFlight == nil && $0.finish == nil && $0.id == nil && !$0.suppressed }
        if waiting, let startsHeldUntil { deadlines.append(startsHeldUntil) }
        for entry in entries.values where entry.inFlight == nil && entry.finish == nil {
            if let held = entry.heldUntil, entry.id == nil || entry.delivered != entry.desired.content { deadlines.append(held) }
        }
        return deadlines.min()
    }

    /// How many activities the bridge follows (finished ones included until their end is
    /// acknowledged), and how many of them the daemon holds.
    package var counts: (followed: Int, live: Int) {
        (entries.count, entries.values.count { $0.id != nil })
    }
}

extension ActivityBook.Refusal {
    var meansGone: Bool { self == .noSuchActivity || self == .activityEnded }
}
