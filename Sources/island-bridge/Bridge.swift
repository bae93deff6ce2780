import Foundation
import IslandBridge
import OrderedJSON
import IslandKit
import Logging
import OrderedCollections
import SDBus

/// The bridge process's one actor: it runs on the sd-bus loop, so every bus callback, every
/// source's bookkeeping and the `ActivityBook` share that thread and need no locks; the calls
/// to islandd (IslandKit, on its own NIO loop) are awaited from tasks on it and come back to
/// it with their outcome.
///
/// Nothing here polls. The loop wakes for bus traffic, for IslandKit's replies and events,
/// and for the one timer the book asks for while something waits (a refusal's hold, the
/// daemon out of reach), or the one that reconnects a lost bus.
actor Bridge {
    nonisolated let loop: BusLoop
    nonisolated var unownedExecutor: UnownedSerialExecutor { loop.asUnownedSerialExecutor() }

    var configuration: BridgeConfiguration
    let connection: IslandConnection
    let logger: Logger
    let busAddress: String?
    let currentDesktop: String?
    var servesJobs: Bool
    var entries: InstalledDesktopEntries

    var book: ActivityBook
    var bus: Bus?
    var busID = ""
    /// Matches, served objects and names of the current bus connection.
    var busSlots: [BusSlot] = []
    var monitor: Bus?
    var players = MediaPlayers()
    /// Who the senders met on the current bus are (`Bridge+Identity`).
    var identities = SenderIdentities()
    /// What the monitor saw of notifications, in order, waiting while a reply's sender is
    /// being identified.
    var notificationEvents: [NotificationEvent] = []
    /// The connections whose notifications are followed, each until it leaves the bus.
    var notificationOwners: [String: BusNameTracker] = [:]
    var notifications: ProgressNotifications
    var jobs: JobViews
    var jobSlots: [UInt32: [BusSlot]] = [:]
    var jobOwners: [String: BusNameTracker] = [:]
    /// Reads of the first scan of the bus still under way; the book settles when none is.
    var initialReads = 0
    var daemonListed = false

    private var bookTimer: LoopTimer?
    private var busTimer: LoopTimer?
    private var daemonTimer: LoopTimer?
    private var busBackoff = Duration.zero
    private var daemonBackoff = Duration.zero
    private var events: Task<Void, Never>?
    private var stopping = false

    init(loop: BusLoop, configuration: BridgeConfiguration, connection: IslandConnection, busAddress: String?,
         environment: [String: String], logger: Logger) {
        self.loop = loop
        self.configuration = configuration
        self.connection = connection
        self.busAddress = busAddress
        self.logger = logger
        currentDesktop = environment["XDG_CURRENT_DESKTOP"]
        servesJobs = configuration.servesJobs(currentDesktop: currentDesktop)
        entries = InstalledDesktopEntries(environment: environment)
        book = ActivityBook(capacity: configuration.maxActivities, instance: String(UInt32.random(in: .min ... .max), radix: 36))
        notifications = ProgressNotifications(busID: "")
        jobs = JobViews(busID: "", maximumJobs: configuration.maxJobs, maximumJobsPerSender: configuration.maxJobsPerSender)
    }

    static var now: Double { Date().timeIntervalSince1970 }

    // MARK: Start and stop

    func start() {
        do {
            bookTimer = try LoopTimer(loop: loop) { [self] in pump() }
            busTimer = try LoopTimer(loop: loop) { [self] in connectBus() }
            daemonTimer = try LoopTimer(loop: loop) { [self] in connectDaemon() }
        } catch {
            logger.critical("cannot arm timers on the bus loop", metadata: ["error": "\(error)"])
        }
        logger.info("starting", metadata: [
            "mpris": "\(configuration.mprisEnabled)", "notifications": "\(configuration.notificationsEnabled)",
            "jobs": "\(servesJobs)", "maxActivities": "\(configuration.maxActivities)",
        ])
        connectBus()
        connectDaemon()
    }

    /// Ends every activity the bridge shows (dismissed at once: nothing is left to follow
    /// them), then lets go of the bus.
    func stop() async {
        stopping = true
        events?.cancel()
        for source in book.sources { book.finish(source, content: nil, dismissal: .immediate) }
        let ends = book.commands(now: Self.now)
        await withTaskGroup(of: Void.self) { group in
            for command in ends {
                group.addTask { [connection] in _ = await Self.execute(command, on: connection) }
            }
        }
        bookTimer = nil
        busTimer = nil
        daemonTimer = nil
        dropBus()
        await connection.close()
        logger.info("stopped", metadata: ["ended": "\(ends.count)"])
    }

    /// A new configuration (SIGHUP). Limits apply at once; a source turned on or off makes
    /// the bridge follow the bus afresh, since what it showed from it ends.
    func reconfigure(_ new: BridgeConfiguration) {
        let old = configuration
        configuration = new
        book.configure(capacity: new.maxActivities)
        let jobsNow = new.servesJobs(currentDesktop: currentDesktop)
        logger.info("reloaded the configuration", metadata: ["path": "bridge.conf"])
        if old.mprisEnabled != new.mprisEnabled || old.notificationsEnabled != new.notificationsEnabled || jobsNow != servesJobs
            || old.maxJobs != new.maxJobs || old.maxJobsPerSender != new.maxJobsPerSender {
            servesJobs = jobsNow
            endBusSources()
            connectBus()
        } else {
            pump()
        }
    }

    // MARK: The bus

    private func connectBus() {
        guard !stopping, bus == nil else { return }
        do {
            let bus = try Bus.connect(address: busAddress, loop: loop, description: "island-bridge") { [self] in
                busLost()
            }
            self.bus = bus
            busID = String(bus.busID.prefix(12))
            busBackoff = .zero
            notificationEvents = []
            forgetSenders()
            notifications = ProgressNotifications(busID: busID)
            jobs = JobViews(busID: busID, maximumJobs: configuration.maxJobs, maximumJobsPerSender: configuration.maxJobsPerSender)
            logger.info("connected to the session bus", metadata: ["name": "\(bus.uniqueName)"])
            if configuration.mprisEnabled { startMPRIS(on: bus) }
            if configuration.notificationsEnabled { startNotifications(on: bus) }
            if servesJobs { startJobs(on: bus) }
            settleIfScanned()
        } catch {
            busBackoff = min(.seconds(30), max(.seconds(1), busBackoff * 2))
            logger.warning("cannot connect to the session bus; retrying", metadata: [
                "error": "\(error)", "retryIn": "\(busBackoff)",
            ])
            busTimer?.arm(after: busBackoff)
        }
    }

    /// The bus went away (dbus-daemon restarted, or the session ends): what came from it
    /// ends, and a new connection is made.
    private func busLost() {
        logger.warning("lost the session bus; reconnecting")
        endBusSources()
        guard !stopping else { return }
        busBackoff = .milliseconds(100)
        busTimer?.arm(after: busBackoff)
    }

    /// Ends what came from the bus and lets go of it.
    private func endBusSources() {
        for change in players.removeAll() {
            if case .vanished(let owner) = change {
                apply([.finish(source: MediaPlayer.source(busID: busID, owner: owner), content: nil, keep: false)])
            }
        }
        apply(notifications.serverChanged(to: nil))
        apply(jobs.removeAll())
        dropBus()
    }

    private func dropBus() {
        notificationOwners = [:]
        jobOwners = [:]
        jobSlots = [:]
        busSlots = []
        monitor?.close()
        monitor = nil
        bus?.close()
        bus = nil
    }

    /// Calls a method, logging a failure rather than reporting it (a player's buttons).
    func callQuietly(_ destination: String, _ path: String, _ interface: String, _ member: String, _ arguments: [BusValue] = []) {
        do {
            try bus?.call(destination: destination, path: path, interface: interface, member: member, arguments: arguments) {
                [logger] result in
                if case .failure(let error) = result {
                    logger.info("a call to a source failed", metadata: ["call": "\(interface).\(member)", "error": "\(error)"])
                }
            }
        } catch {
            logger.info("a call to a source failed", metadata: ["call": "\(interface).\(member)", "error": "\(error)"])
        }
    }

    func settleIfScanned() {
        guard initialReads == 0, daemonListed else { return }
        book.settle()
        pump()
    }

    // MARK: Sources to the book, the book to the daemon

    /// What a source's event made of its activities.
    func apply(_ changes: [SourceChange]) {
        guard !changes.isEmpty else { return }
        let now = Self.now
        for change in changes {
            switch change {
            case .show(let activity): book.show(activity)
            case .finish(let source, let content, let keep):
                book.finish(source, content: content, dismissal: keep ? .after(now + configuration.keepEnded) : .immediate)
            }
        }
        pump()
    }

    /// Hands the book's commands to the daemon.
    func pump() {
        guard !stopping else { return }
        let now = Self.now
        for command in book.commands(now: now) {
            Task { [connection] in
                let outcome = await Self.execute(command, on: connection)
                self.completed(command.ticket, outcome)
            }
        }
        for notice in book.takeNotices() {
            switch notice.level {
            case .info: logger.info("\(notice.message)")
            case .warning: logger.warning("\(notice.message)")
            }
        }
        if let deadline = book.nextDeadline {
            bookTimer?.arm(after: .milliseconds(Int64(max(0, deadline - now) * 1000) + 1))
        } else {
            bookTimer?.disarm()
        }
    }

    private func completed(_ ticket: ActivityBook.Ticket, _ outcome: ActivityBook.Outcome) {
        book.completed(ticket, outcome, now: Self.now)
        pump()
    }

    // MARK: The daemon

    private func connectDaemon() {
        guard !stopping else { return }
        Task {
            do {
                let info = try await connection.authorizationInfo()
                let stream = try await connection.events()
                let listed = try await connection.list(states: [.active, .stale])
                daemonConnected(info: info, stream: stream, listed: listed)
            } catch let error as ActivityAuthorizationError {
                daemonRefused(error)
            } catch {
                daemonRefused(.daemonUnavailable(socketPath: connection.configuration.socketPath, reason: "\(error)"))
            }
        }
    }

    private func daemonConnected(info: AuthorizationSnapshot, stream: AsyncStream<ActivityEvent>, listed: [ActivitySnapshot]) {
        daemonBackoff = .zero
        logger.info("connected to islandd", metadata: [
            "socket": "\(connection.configuration.socketPath)", "enabled": "\(info.enabled)",
            "maxActivitiesPerApp": "\(info.limits["maxActivitiesPerApp"]?.intValue.map(String.init) ?? "?")",
        ])
        book.authorized(enabled: info.enabled, maximumActivities: info.limits["maxActivitiesPerApp"]?.intValue)
        book.adopt(listed.map(Self.listed))
        daemonListed = true
        events = Task {
            for await event in stream { self.handle(event) }
        }
        settleIfScanned()
        pump()
    }

    private func daemonRefused(_ error: ActivityAuthorizationError) {
        if case .daemonUnavailable = error {
            daemonBackoff = min(.seconds(30), max(.seconds(1), daemonBackoff * 2))
            logger.warning("islandd is not reachable; retrying", metadata: ["error": "\(error)", "retryIn": "\(daemonBackoff)"])
            daemonTimer?.arm(after: daemonBackoff)
            return
        }
        // Unentitled or denied at the first call: IslandKit's connection gave up; the book
        // waits for an authorization event that will not come, so try again, slowly.
        logger.warning("islandd refuses the bridge", metadata: ["error": "\(error)"])
        daemonBackoff = .seconds(60)
        daemonTimer?.arm(after: daemonBackoff)
    }

    private func handle(_ event: ActivityEvent) {
        switch event.kind {
        case .state:
            if let activity = event.activity, activity.state == .ended || activity.state == .dismissed {
                book.daemonEnded(id: activity.id, reason: activity.endReason?.rawValue)
            }
        case .authorization:
            if let info = event.authorization {
                book.authorized(enabled: info.enabled, maximumActivities: info.limits["maxActivitiesPerApp"]?.intValue)
            }
        case .resync:
            book.daemonReconnected()
        case .tap:
            if let id = event.activity?.id, let source = book.source(ofActivity: id) { tapped(source) }
        case .button:
            if let id = event.activity?.id, let action = event.action, let source = book.source(ofActivity: id) {
                pressed(action, on: source)
            }
        case .content, .pushToken, .pushToStartToken:
            // The bridge asks for no push tokens: its sources are on this machine.
            break
        }
        pump()
    }

    private func tapped(_ source: String) {
        if source.hasPrefix("mpris:") { raisePlayer(source: source) }
    }

    private func pressed(_ action: String, on source: String) {
        if source.hasPrefix("mpris:") {
            controlPlayer(source: source, action: action)
        } else if source.hasPrefix("job:") {
            signalJob(source: source, action: action)
        }
    }

    static func listed(_ activity: ActivitySnapshot) -> ActivityBook.Listed {
        ActivityBook.Listed(id: activity.id, source: activity.attributes["source"]?.stringValue,
                            content: BridgedContent(activity.content))
    }

    /// Runs one of the book's commands against the daemon.
    static func execute(_ command: ActivityBook.Command, on connection: IslandConnection) async -> ActivityBook.Outcome {
        do {
            switch command {
            case .request(_, let key, let type, let attributes, let content):
                let (activity, created) = try await connection.request(type: type, attributes: attributes, content: content.raw,
                                                                       key: key, ownerGone: .stale)
                // Found by its key (a retry after a lost reply): what the daemon holds may be older.
                return .requested(id: activity.id, ended: activity.state == .ended || activity.state == .dismissed,
                                  content: created ? content : BridgedContent(activity.content))
            case .update(_, let id, let content):
                _ = try await connection.update(id: id, content: content.raw)
                return .updated
            case .end(_, let id, let content, let dismissal):
                let policy: ActivityUIDismissalPolicy = switch dismissal {
                case .immediate: .immediate
                case .after(let date): .after(Date(timeIntervalSince1970: date))
                }
                _ = try await connection.end(id: id, content: content?.raw, dismissalPolicy: policy)
                return .ended
            }
        } catch let error as ActivityAuthorizationError {
            return outcome(of: error)
        } catch {
            return .unavailable
        }
    }

    static func outcome(of error: ActivityAuthorizationError) -> ActivityBook.Outcome {
        switch error {
        case .daemonUnavailable: .unavailable
        case .denied: .refused(.denied)
        case .unentitled(_, let reason): .refused(.unentitled(reason))
        case .targetMaximumExceeded(_, let limit): .refused(.targetMaximum(limit: limit))
        case .globalMaximumExceeded(let limit): .refused(.globalMaximum(limit: limit))
        case .startBudgetExceeded(_, _, _, let retryAfter): .refused(.startBudget(retryAfter: retryAfter))
        case .noSuchActivity: .refused(.noSuchActivity)
        case .activityEnded: .refused(.activityEnded)
        default: .refused(.other(name: error.name, detail: error.description))
        }
    }
}

extension ActivityBook.Command {
    var ticket: ActivityBook.Ticket {
        switch self {
        case .request(let ticket, _, _, _, _), .update(let ticket, _, _), .end(let ticket, _, _, _): ticket
        }
    }
}

extension BridgedContent {
    init(_ content: RawActivityContent) {
        self.init(state: content.state, staleDate: content.staleDate, relevance: content.relevanceScore)
    }

    var raw: RawActivityContent {
        RawActivityContent(state: state, staleDate: staleDate, relevanceScore: relevance)
    }
}
