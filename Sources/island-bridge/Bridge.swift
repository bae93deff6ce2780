import Foundation
import FreeDesktop
import IslandBridge
import OrderedJSON
import IslandKit
import Logging
import OrderedCollections
import SDBus
import VarlinkCore
import VarlinkNIO
import IslandProtocol

/// The bridge process's one actor: it wires the sources of the session bus
/// (`SessionSources`: MPRIS, notifications, jobs) to the `ActivityBook`, the book to islandd,
/// and islandd's taps and buttons back to the source each activity came from; and the
/// desktop's Do Not Disturb switch (`DesktopFocus`) to islandd's focus, and the screen-cast
/// sessions on the bus (`ScreenCastSessions`) to islandd's sharing, and the desktop's lock
/// reports (`LockSignal`, `DesktopLock`) to islandd's lock. It runs on the
/// sd-bus loop, so every bus callback, every source and the book share that thread and need no
/// locks; the calls to islandd (IslandKit, on its own NIO loop) are awaited from tasks on it
/// and come back to it with their outcome.
///
/// Nothing here polls. The loop wakes for bus traffic, for IslandKit's replies and events,
/// and for the one timer the book asks for while something waits (a refusal's hold, the
/// daemon out of reach), or the ones that reconnect a lost bus or daemon.
actor Bridge {
    nonisolated let loop: BusLoop
    nonisolated var unownedExecutor: UnownedSerialExecutor { loop.asUnownedSerialExecutor() }

    private var configuration: BridgeConfiguration
    private let connection: IslandConnection
    private let logger: Logger
    private var host: BridgeHost
    private var book: ActivityBook
    /// The session bus and what is followed on it, while connected.
    private var session: SessionBus?
    /// What islandd is told of the desktop's focus, screen sharing and lock.
    private var desktop = DesktopAnnouncements(backoff: Bridge.reconnect)
    /// The connections tried again after a failure: the session bus, islandd, the system bus.
    private var links = RetryingLinks<Link>(backoff: Bridge.reconnect)
    /// The one timer: armed for the book's next deadline or the next retry of a link, the earlier.
    private var timer: LoopTimer?
    private var daemon = DaemonState()
    private var stopping = false

    init(
        loop: BusLoop, configuration: BridgeConfiguration, connection: IslandConnection, busAddress: String?,
        environment: [String: String], logger: Logger
    ) {
        self.loop = loop
        self.configuration = configuration
        self.connection = connection
        self.logger = logger
        host = BridgeHost(busAddress: busAddress, environment: environment)
        book = ActivityBook(capacity: configuration.maxActivities, instance: String(UInt32.random(in: .min ... .max), radix: 36))
    }

    /// The book's clock.
    static var now: Double { Date().timeIntervalSince1970 }

    // MARK: Start and stop

    func start() {
        do {
            timer = try LoopTimer(loop: loop) { [self] in timerFired() }
        } catch {
            logger.critical("cannot arm timers on the bus loop", metadata: ["error": "\(error)"])
        }
        logger.info(
            "starting",
            metadata: [
                "mpris": "\(configuration.mprisEnabled)", "notifications": "\(configuration.notificationsEnabled)",
                "jobs": "\(configuration.servesJobs(currentDesktop: host.currentDesktop))", "maxActivities": "\(configuration.maxActivities)",
                "followFocus": "\(configuration.followFocus)", "followScreenSharing": "\(configuration.followScreenSharing)",
                "followLock": "\(configuration.followLock)",
            ])
        connectBus()
        connectDaemon()
    }

    /// Ends every activity the bridge shows (dismissed at once: nothing is left to follow
    /// them), then lets go of the bus.
    func stop() async {
        stopping = true
        daemon.events?.cancel()
        for source in book.sources { book.finish(source, content: nil, dismissal: .immediate) }
        let ends = book.commands(now: Self.now)
        await withTaskGroup(of: Void.self) { group in
            for command in ends {
                group.addTask { [connection, logger] in _ = await command.run(on: connection, logger: logger) }
            }
        }
        timer = nil
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
        logger.info("reloaded the configuration", metadata: ["path": "bridge.conf"])
        if new.restartsSources(from: old, currentDesktop: host.currentDesktop) {
            endBusSources()
            connectBus()
        } else {
            session?.sources.mpris?.staleAfterPause = new.staleAfterPause
            pump()
        }
        if old.followFocus != new.followFocus { followFocus() }
        if old.followScreenSharing != new.followScreenSharing { followScreenSharing() }
        if old.followLock != new.followLock { followLock() }
    }

    // MARK: Retrying, on the one timer

    /// The connections that are tried again after a failure, each a `RetryingLink`; the calls
    /// that tell islandd a desktop state are `desktop`'s.
    enum Link: Hashable, CaseIterable {
        case sessionBus, daemon, systemBus
    }

    /// The waits before trying a connection (a bus, islandd) or a call to islandd again after
    /// failed tries: doubling, from a second to half a minute.
    private static let reconnect = Backoff(first: .seconds(1), maximum: .seconds(30))

    /// A bus that was there and went (dbus-daemon restarted) is likely back at once.
    private static let busLostRetry = Duration.milliseconds(100)
    /// An islandd that refuses the bridge will not change its mind soon.
    private static let refusedRetry = Duration.seconds(60)

    /// Arms the timer for the earliest of the book's deadline and the retries due.
    private func armTimer() {
        let now = ContinuousClock.now
        var waits: [Duration] = []
        if let deadline = book.nextDeadline { waits.append(.milliseconds(Int64(max(0, deadline - Self.now) * 1000) + 1)) }
        // A millisecond more, as for the book: the timer fires at or after its time, and the
        // retry is then due.
        for due in [links.nextDue, desktop.nextDue].compactMap({ $0 }) { waits.append(max(.zero, due - now) + .milliseconds(1)) }
        if let wait = waits.min() { timer?.arm(after: wait) } else { timer?.disarm() }
    }

    private func timerFired() {
        let now = ContinuousClock.now
        for link in links.takeDue(now: now) {
            switch link {
            case .sessionBus: connectBus()
            case .daemon: connectDaemon()
            case .systemBus: followLogind()
            }
        }
        desktop.retryDue(now: now)
        announce()
        pump()
        armTimer()
    }

    // MARK: The bus

    private func connectBus() {
        guard !stopping, session == nil else { return }
        let connected: Bus
        do {
            connected = try Bus.connect(address: host.busAddress, loop: loop, description: "island-bridge") { [self] in busLost() }
        } catch {
            let wait = links[.sessionBus].failed(now: .now)
            logger.warning("cannot connect to the session bus; retrying", metadata: ["error": "\(error)", "retryIn": "\(wait)"])
            armTimer()
            return
        }
        links[.sessionBus].held()
        logger.info("connected to the session bus", metadata: ["name": "\(connected.uniqueName)"])
        let bus = SDBusSourceBus(connected, address: host.busAddress, logger: logger)
        let context = SourceContext(
            busID: String(connected.busID.prefix(12)), changes: { [self] in apply($0) },
            readEnded: { [self] in settleIfScanned() }, lookup: { [self] in host.entries.lookup($0) },
            now: { Self.now }, logger: logger)
        let sources = SessionSources(
            bus: bus, context: context, enabled: configuration.enabledSources(currentDesktop: host.currentDesktop),
            staleAfterPause: configuration.staleAfterPause, maximumJobs: configuration.maxJobs,
            maximumJobsPerSender: configuration.maxJobsPerSender)
        session = SessionBus(bus: bus, sources: sources)
        sources.start()
        followFocus()
        followScreenSharing()
        followLock()
        settleIfScanned()
    }

    /// The bus went away (dbus-daemon restarted, or the session ends): what came from it
    /// ends, and a new connection is made.
    private func busLost() {
        logger.warning("lost the session bus; reconnecting")
        endBusSources()
        guard !stopping else { return }
        links[.sessionBus].held()
        links[.sessionBus].retry(after: Self.busLostRetry, now: .now)
        armTimer()
    }

    /// Ends what came from the bus and lets go of it.
    private func endBusSources() {
        if let sources = session?.sources { apply(sources.end()) }
        dropBus()
    }

    private func dropBus() {
        stopFollowingFocus()
        stopFollowingScreenSharing()
        stopFollowingLock()
        session?.bus.close()
        session = nil
    }

    private func settleIfScanned() {
        guard session?.sources.isScanned ?? true, daemon.listed else { return }
        book.settle()
        pump()
    }

    // MARK: Sources to the book, the book to the daemon

    /// What a source's event made of its activities.
    private func apply(_ changes: [SourceChange]) {
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
    private func pump() {
        guard !stopping else { return }
        let now = Self.now
        for command in book.commands(now: now) {
            Task { [connection, logger] in
                let outcome = await command.run(on: connection, logger: logger)
                self.completed(command.ticket, outcome)
            }
        }
        for notice in book.takeNotices() {
            switch notice.level {
            case .info: logger.info("\(notice.message)")
            case .warning: logger.warning("\(notice.message)")
            }
        }
        armTimer()
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

    /// How many activities the bridge may keep at once, from the app's `Limits`; nil when they
    /// are not what the interface says.
    private static func maximumActivities(_ info: AuthorizationSnapshot) -> Int? {
        (try? ProducerReplies.Limits(reply: .object(info.limits)))?.maxActivitiesPerApp
    }

    private func daemonConnected(info: AuthorizationSnapshot, stream: AsyncStream<ActivityEvent>, listed: [ActivitySnapshot]) {
        links[.daemon].held()
        logger.info(
            "connected to islandd",
            metadata: [
                "socket": "\(connection.configuration.socketPath)", "enabled": "\(info.enabled)",
                "maxActivitiesPerApp": "\(Self.maximumActivities(info).map(String.init) ?? "?")",
            ])
        book.authorized(enabled: info.enabled, maximumActivities: Self.maximumActivities(info))
        book.adopt(listed.map(Self.listed))
        daemon.listed = true
        desktop.retry(.focus)
        // A daemon that restarted starts unshared: tell it again while something is cast.
        if configuration.followScreenSharing, let screenCasts = session?.screenCasts, screenCasts.monitor != nil,
            let source = screenCasts.sessions.sharedBy
        {
            desktop.sharing.shared(by: source, again: true)
        }
        desktop.retry(.sharing)
        announce()
        announceLockAgain()
        daemon.events = Task {
            for await event in stream { self.handle(event) }
        }
        settleIfScanned()
        pump()
    }

    private func daemonRefused(_ error: ActivityAuthorizationError) {
        if case .daemonUnavailable = error {
            let wait = links[.daemon].failed(now: .now)
            logger.warning("islandd is not reachable; retrying", metadata: ["error": "\(error)", "retryIn": "\(wait)"])
            armTimer()
            return
        }
        // Unentitled or denied at the first call: IslandKit's connection gave up; the book
        // waits for an authorization event that will not come, so try again, slowly.
        logger.warning("islandd refuses the bridge", metadata: ["error": "\(error)"])
        links[.daemon].retry(after: Self.refusedRetry, now: .now)
        armTimer()
    }

    private func handle(_ event: ActivityEvent) {
        switch event.kind {
        case .state:
            if let activity = event.activity, activity.state == .ended || activity.state == .dismissed {
                book.daemonEnded(id: activity.id, reason: activity.endReason?.rawValue)
            }
        case .authorization:
            if let info = event.authorization {
                book.authorized(enabled: info.enabled, maximumActivities: Self.maximumActivities(info))
            }
        case .resync:
            book.daemonReconnected()
            // The connection came back, perhaps to a daemon that restarted and starts unlocked.
            announceLockAgain()
        case .tap:
            if let key = sourceKey(of: event) { session?.sources.tapped(key) }
        case .button:
            if let key = sourceKey(of: event), let action = event.action { session?.sources.pressed(action, on: key) }
        case .content, .pushToken, .pushToStartToken, .focus:
            // The bridge asks for no push tokens: its sources are on this machine. Focus is
            // the daemon's to apply: the bridge's alerts are suppressed there.
            break
        }
        pump()
    }

    /// The source an event's activity came from.
    private func sourceKey(of event: ActivityEvent) -> SourceKey? {
        event.activity.flatMap { book.source(ofActivity: $0.id) }.flatMap(SourceKey.init)
    }

    // MARK: Focus (the desktop's Do Not Disturb)

    /// Follows the desktop's switches on the bus when the configuration says so; stops
    /// following them otherwise (focus stays as it is). GNOME's setting only in a GNOME
    /// session: elsewhere it is a leftover of one, which the user no longer sees.
    private func followFocus() {
        guard configuration.followFocus, let bus = session?.bus else { return stopFollowingFocus() }
        guard session?.focusSwitches.isEmpty ?? false else { return }
        var switches: [(DesktopFocus.Switch, any FocusSwitch)] = [
            (.dunst, ServerFocus(bus: bus, reader: .dunstPause) { [self] in focusRead(.dunst, $0) }),
            (.kde, ServerFocus(bus: bus, reader: .kdeInhibition) { [self] in focusRead(.kde, $0) }),
            (.swaync, ServerFocus(bus: bus, reader: .swaync) { [self] in focusRead(.swaync, $0) }),
            (.mako, ServerFocus(bus: bus, reader: .mako) { [self] in focusRead(.mako, $0) }),
        ]
        if host.isGNOME {
            let gnome = GnomeFocus(bus: bus, read: { [self] in readGnomeFocus() }, reading: { [self] in focusRead(.gnome, $0) })
            switches.append((.gnome, gnome))
        }
        for (source, desktopSwitch) in switches {
            do {
                try desktopSwitch.start()
                session?.focusSwitches.append(desktopSwitch)
            } catch {
                logger.error("cannot follow \(source.name)", metadata: ["error": "\(error)"])
            }
        }
    }

    private func stopFollowingFocus() {
        for desktopSwitch in session?.focusSwitches ?? [] { desktopSwitch.stop() }
        session?.focusSwitches = []
    }

    private func readGnomeFocus() {
        GSettingsReader.readBool(schema: "org.gnome.desktop.notifications", key: "show-banners") { showBanners in
            Task { await self.gnomeFocusRead(showBanners: showBanners) }
        }
    }

    private func gnomeFocusRead(showBanners: Bool?) {
        // The switches followed when the answer comes back, not those of when it was asked.
        for case let gnome as GnomeFocus in session?.focusSwitches ?? [] { gnome.answered(showBanners: showBanners) }
    }

    private func focusRead(_ source: DesktopFocus.Switch, _ focus: Bool?) {
        if let change = desktop.focus.read(source, focus: focus) { logger.info("\(change)") }
        announce()
    }

    // MARK: Telling islandd the desktop's states

    /// Sends the calls `desktop` has due, each on an Admin connection of its own.
    private func announce() {
        guard !stopping else { return }
        for call in desktop.nextCalls() {
            Task { [connection, logger] in
                let reply = await Self.admin(call.method, call.parameters, socketPath: connection.configuration.socketPath, logger: logger)
                if let reply {
                    let told = call.told(reply: reply)
                    logger.info("\(told.message)", metadata: .init(uniqueKeysWithValues: told.fields.map { ($0, .string($1)) }))
                }
                self.announced(call, succeeded: reply != nil)
            }
        }
    }

    /// A call that failed is tried again after the waits of its link.
    private func announced(_ call: DesktopAnnouncements.Call, succeeded: Bool) {
        desktop.completed(call, succeeded: succeeded, now: .now)
        armTimer()
        announce()
    }

    /// A daemon that accepts the connection and never answers holds the call this long.
    private static let adminTimeout = Duration.seconds(10)

    /// One Admin call on a connection of its own: a connection has one role, and the bridge's is
    /// the producer's. islandd lets the user's own unconfined processes administer. The reply,
    /// or nil (logged) when it could not be made: the caller retries.
    private static func admin(_ method: String, _ parameters: JSONObject, socketPath: String, logger: Logger) async -> JSONObject? {
        do {
            let client = try await VarlinkClient.connect(unixPath: socketPath)
            let timeout = Task {
                try await Task.sleep(for: adminTimeout)
                await client.close()
            }
            defer { timeout.cancel() }
            do {
                let reply = try await client.call(method, parameters)
                await client.close()
                return reply
            } catch {
                await client.close()
                throw error
            }
        } catch {
            logger.warning("cannot call islandd's Admin; retrying", metadata: ["method": "\(method)", "error": "\(error)"])
            return nil
        }
    }

    // MARK: Screen sharing

    /// Follows the screen-cast sessions on the bus, on a monitor connection of their own, when
    /// the configuration says so, and tells islandd what they add up to — at once too, since
    /// the bridge cannot know what was said before it (or before the bus came back). Stops
    /// following them otherwise (sharing stays as it is). A bus that refuses to make a monitor
    /// (`BecomeMonitor`) is said once: nothing is detected then.
    private func followScreenSharing() {
        guard configuration.followScreenSharing, let bus = session?.bus else { return stopFollowingScreenSharing() }
        guard session?.screenCasts.monitor == nil else { return }
        do {
            session?.screenCasts.monitor = try bus.monitor(rules: ScreenCastEvent.monitorRules) { [self] message in
                // Most messages (a call starting, or refused) change nothing to act on: a
                // flood of them costs a look-up each, never a round trip to the bus.
                guard let event = ScreenCastEvent(message), session?.screenCasts.sessions.observe(event) == true else { return }
                screenCastsChanged()
            }
        } catch {
            if session?.screenCasts.refusalLogged == false {
                session?.screenCasts.refusalLogged = true
                logger.error(
                    "cannot watch screen casts (BecomeMonitor refused): sharing the screen will not hide activity content",
                    metadata: ["error": "\(error)"])
            }
            return
        }
        logger.info("following screen casts (xdg-desktop-portal ScreenCast, Mutter ScreenCast)")
        desktop.sharing.shared(by: session?.screenCasts.sessions.sharedBy, again: true)
        announce()
    }

    private func stopFollowingScreenSharing() {
        session?.screenCasts.stop()
    }

    /// After what the monitor saw or a peer leaving: the peers followed, and islandd told
    /// when the screen's being shared changed.
    private func screenCastsChanged() {
        guard let bus = session?.bus, let screenCasts = session?.screenCasts else { return }
        let peers = screenCasts.sessions.peers
        for name in screenCasts.peers.keys where !peers.contains(name) { session?.screenCasts.peers[name] = nil }
        for name in peers where screenCasts.peers[name] == nil {
            do {
                session?.screenCasts.peers[name] = try bus.track(name) { [self] in
                    session?.screenCasts.sessions.left(name)
                    // Not from inside the tracker's own callback.
                    session?.bus.afterDispatch { [self] in screenCastsChanged() }
                }
            } catch {
                logger.debug("cannot follow a screen cast's peer", metadata: ["name": "\(name)", "error": "\(error)"])
            }
        }
        let shared = session?.screenCasts.sessions.sharedBy
        if shared != session?.screenCasts.sharedBefore {
            if let shared {
                logger.info(
                    "the screen is shared",
                    metadata: [
                        "by": "\(shared.rawValue)", "sessions": "\(session?.screenCasts.sessions.sessionCount ?? 0)",
                    ])
            } else {
                logger.info("the screen is no longer shared")
            }
            session?.screenCasts.sharedBefore = shared
        }
        desktop.sharing.shared(by: shared)
        announce()
    }

    // MARK: The session lock

    /// Follows the desktop's lock reports when the configuration says so — GNOME Shell's and the
    /// freedesktop screensaver's on the session bus, logind's `LockedHint` on the system bus —
    /// and tells islandd what they add up to, at once too (the bridge cannot know what was said
    /// before it). Stops following them otherwise (the lock stays as it is).
    private func followLock() {
        guard configuration.followLock, let bus = session?.bus else { return stopFollowingLock() }
        guard session?.lockSignals.isEmpty ?? false else { return }
        for kind in [LockSignal.Kind.gnome, .freedesktop] {
            let signal = LockSignal(kind, bus: bus) { [self] in lockRead(kind, $0) }
            do {
                try signal.start()
                session?.lockSignals.append(signal)
            } catch {
                logger.error("cannot follow \(kind.service)", metadata: ["error": "\(error)"])
            }
        }
        logger.info("following the session lock (org.gnome.ScreenSaver, org.freedesktop.ScreenSaver, logind's LockedHint)")
        desktop.lock.announceAgain()
        announce()
        followLogind()
        followGnomeLockScreen(bus: bus)
    }

    /// GNOME's own per-app lock-screen settings, in a GNOME session only (elsewhere they are a
    /// leftover the user no longer sees), read again after each dconf write that touches them.
    private func followGnomeLockScreen(bus: SDBusSourceBus) {
        let desktops = (host.currentDesktop ?? "").split(separator: ":").map { $0.uppercased() }
        guard desktops.contains("GNOME"), session?.lockScreenSettings == nil else { return }
        let follower = GnomeLockScreenFollower(
            bus: bus, read: { [self] in readGnomeLockScreen() },
            reading: { [self] in gnomeLockScreenRead($0) })
        do {
            try follower.start()
            session?.lockScreenSettings = follower
        } catch {
            logger.error("cannot follow GNOME's lock-screen settings", metadata: ["error": "\(error)"])
        }
    }

    private func readGnomeLockScreen() {
        DconfDump.read(GnomeLockScreen.directory) { dump in
            Task { await self.gnomeLockScreenDumped(dump) }
        }
    }

    private func gnomeLockScreenDumped(_ dump: String?) {
        // The follower of when the answer comes back, not the one of when it was asked.
        session?.lockScreenSettings?.answered(dump: dump)
    }

    private func gnomeLockScreenRead(_ levels: GnomeLockScreen?) {
        guard let levels else {
            // What islandd was told stays: an unreadable dump says nothing of the user's wish.
            return logger.warning(
                "cannot read GNOME's lock-screen settings (is dconf installed?)",
                metadata: ["directory": "\(GnomeLockScreen.directory)"])
        }
        logger.debug(
            "GNOME's lock-screen settings",
            metadata: [
                "everyAppSecret": "\(levels.everyAppSecret)", "private": "\(levels.privateApps)", "secret": "\(levels.secretApps)",
            ])
        // The first read is said even if it is islandd's default: a bridge that starts cannot know
        // what the one before it said.
        desktop.lockScreen.wish(levels, again: session?.lockScreenRead == nil)
        session?.lockScreenRead = levels
        announce()
    }

    /// logind's report, on a system bus connection of its own; one that fails or goes away is
    /// tried again after the waits of a reconnection (logind's report reads nil meanwhile).
    private func followLogind() {
        guard !stopping, configuration.followLock, let session, session.systemBus == nil else { return }
        let systemBusAddress = host.systemBusAddress
        // A machine with no system bus at all (a container, a test) has no logind to follow:
        // retrying would wake the bridge every 30 s for ever. The screensavers are still read.
        if let socket = host.systemBusSocket, !FileManager.default.fileExists(atPath: socket) {
            logger.info("no system bus here, so logind's LockedHint is not followed", metadata: ["address": "\(systemBusAddress)"])
            return
        }
        let connected: Bus
        do {
            connected = try Bus.connect(address: systemBusAddress, loop: loop, description: "island-bridge-logind") { [self] in
                systemBusLost()
            }
        } catch {
            let wait = links[.systemBus].failed(now: .now)
            logger.warning(
                "cannot connect to the system bus for logind's LockedHint; retrying",
                metadata: ["error": "\(error)", "retryIn": "\(wait)"])
            armTimer()
            return
        }
        links[.systemBus].held()
        let systemBus = SDBusSourceBus(connected, address: systemBusAddress, logger: logger)
        let signal = LockSignal(.logind, bus: systemBus, sessionID: host.sessionID) { [self] in lockRead(.logind, $0) }
        do {
            try signal.start()
        } catch {
            logger.error("cannot follow logind's LockedHint", metadata: ["error": "\(error)"])
            systemBus.close()
            return
        }
        self.session?.systemBus = systemBus
        self.session?.lockSignals.append(signal)
    }

    private func systemBusLost() {
        logger.warning("lost the system bus; reconnecting for logind's LockedHint")
        dropSystemBus()
        guard !stopping else { return }
        links[.systemBus].retry(after: Self.busLostRetry, now: .now)
        armTimer()
    }

    private func dropSystemBus() {
        for signal in session?.lockSignals ?? [] where signal.kind.isOnSystemBus { signal.stop() }
        session?.lockSignals.removeAll { $0.kind.isOnSystemBus }
        session?.systemBus?.close()
        session?.systemBus = nil
        if let change = desktop.lock.forget([.logind]) { logger.info("\(change)") }
        announce()
    }

    private func stopFollowingLock() {
        session?.lockScreenSettings?.stop()
        session?.lockScreenSettings = nil
        desktop.lockScreen.drop()
        for signal in session?.lockSignals ?? [] { signal.stop() }
        session?.lockSignals = []
        links[.systemBus].cancel()
        session?.systemBus?.close()
        session?.systemBus = nil
        // Forgotten without a word to islandd: not following, the lock stays as it is (as after
        // the bus went away, until the reports are read again).
        desktop.lock.stopFollowing()
    }

    /// A daemon that restarted starts unlocked: it is told again while the session is locked.
    private func announceLockAgain() {
        if configuration.followLock, session?.lockSignals.isEmpty == false, desktop.lock.lockedBy != nil { desktop.lock.announceAgain() }
        desktop.retry(.lock)
        // It starts with no desktop levels either.
        if session?.lockScreenSettings != nil, let levels = session?.lockScreenRead { desktop.lockScreen.wish(levels, again: true) }
        desktop.retry(.lockScreen)
        announce()
    }

    private func lockRead(_ kind: LockSignal.Kind, _ locked: Bool?) {
        logger.debug("lock report: \(kind.rawValue) says \(locked.map { $0 ? "locked" : "unlocked" } ?? "nothing")")
        if let change = desktop.lock.read(kind, locked: locked) { logger.info("\(change)") }
        announce()
    }

    static func listed(_ activity: ActivitySnapshot) -> ActivityBook.Listed {
        ActivityBook.Listed(
            id: activity.id, source: activity.attributes["source"]?.stringValue,
            content: BridgedContent(activity.content))
    }
}

/// The session bus and what the bridge follows on it, while connected: its sources, and the
/// desktop's switches and reports while the configuration says to follow them.
struct SessionBus {
    let bus: SDBusSourceBus
    let sources: SessionSources
    /// The desktop's Do Not Disturb switches; GNOME's among them in a GNOME session.
    var focusSwitches: [any FocusSwitch] = []
    var screenCasts = ScreenCastFollowing()
    /// The desktop's lock reports: the screensavers on this bus, logind's on `systemBus`.
    var lockSignals: [LockSignal] = []
    /// A system bus connection of its own, for logind's report.
    var systemBus: SDBusSourceBus?
    /// GNOME's lock-screen settings, followed in a GNOME session, and what they said last.
    var lockScreenSettings: GnomeLockScreenFollower?
    var lockScreenRead: GnomeLockScreen?
}

/// The screen-cast sessions seen by a monitor of their own, while followed.
struct ScreenCastFollowing {
    var sessions = ScreenCastSessions()
    var monitor: BusSubscription?
    /// The clients and services of screen-cast sessions, followed until they leave the bus.
    var peers: [String: BusSubscription] = [:]
    /// What the screen casts added up to when last logged.
    var sharedBefore: ScreenCastSessions.Service?
    /// Logged once per bus connection: a monitor refused stays refused.
    var refusalLogged = false

    /// Stops following (the refusal, once logged, stays logged for this bus).
    mutating func stop() {
        self = ScreenCastFollowing(refusalLogged: refusalLogged)
    }
}

/// islandd as the bridge follows it.
struct DaemonState {
    /// Whether its activities were listed since the bridge started.
    var listed = false
    var events: Task<Void, Never>?
}
