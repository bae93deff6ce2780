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
    private let busAddress: String?
    private let currentDesktop: String?
    private var entries: InstalledDesktopEntries
    private var book: ActivityBook

    /// The session bus and the sources following it, while connected.
    private var bus: SDBusSourceBus?
    private var sources: SessionSources?
    /// The desktop's Do Not Disturb switches followed on the bus, while connected; GNOME's
    /// among them in a GNOME session.
    private var desktopSwitches: [any DesktopSwitch] = []
    private var gnomeBanners: GnomeBanners?
    private var desktopFocus = DesktopFocus()
    /// The screen-cast sessions seen by a monitor of their own, while following them.
    private var screenCasts = ScreenCastSessions()
    private var screenCastMonitor: BusSubscription?
    /// The clients and services of screen-cast sessions, followed until they leave the bus.
    private var screenCastPeers: [String: BusSubscription] = [:]
    private var sharingAnnouncer = SharingAnnouncer()
    /// What the screen casts added up to when last logged.
    private var sharedBefore: ScreenCastSessions.Service?
    /// Logged once per bus connection: a monitor refused stays refused.
    private var screenCastRefusalLogged = false
    /// The desktop's lock reports followed, while connected: the screensavers on the session
    /// bus, logind's on a system bus connection of its own.
    private var lockSignals: [LockSignal] = []
    private var systemBus: SDBusSourceBus?
    private var desktopLock = DesktopLock()
    private let systemBusAddress: String
    private let sessionID: String
    private var daemonListed = false
    private var events: Task<Void, Never>?
    private var stopping = false

    private var bookTimer: LoopTimer?
    private var busTimer: LoopTimer?
    private var daemonTimer: LoopTimer?
    private var focusTimer: LoopTimer?
    private var sharingTimer: LoopTimer?
    private var lockTimer: LoopTimer?
    private var systemBusTimer: LoopTimer?
    /// Failed tries since the last connection, for `reconnect`'s waits.
    private var busAttempts = 0
    private var daemonAttempts = 0
    private var focusAttempts = 0
    private var sharingAttempts = 0
    private var lockAttempts = 0
    private var systemBusAttempts = 0

    init(loop: BusLoop, configuration: BridgeConfiguration, connection: IslandConnection, busAddress: String?,
         environment: [String: String], logger: Logger) {
        self.loop = loop
        self.configuration = configuration
        self.connection = connection
        self.busAddress = busAddress
        self.logger = logger
        currentDesktop = environment["XDG_CURRENT_DESKTOP"]
        // sd-bus's own default for the system bus, which tests point elsewhere.
        systemBusAddress = environment["DBUS_SYSTEM_BUS_ADDRESS"] ?? "unix:path=/run/dbus/system_bus_socket"
        sessionID = environment["XDG_SESSION_ID"].flatMap { $0.isEmpty ? nil : $0 } ?? "auto"
        entries = InstalledDesktopEntries(environment: environment)
        book = ActivityBook(capacity: configuration.maxActivities, instance: String(UInt32.random(in: .min ... .max), radix: 36))
    }

    static var now: Double { Date().timeIntervalSince1970 }

    // MARK: Start and stop

    func start() {
        do {
            bookTimer = try LoopTimer(loop: loop) { [self] in pump() }
            busTimer = try LoopTimer(loop: loop) { [self] in connectBus() }
            daemonTimer = try LoopTimer(loop: loop) { [self] in connectDaemon() }
            focusTimer = try LoopTimer(loop: loop) { [self] in
                desktopFocus.retry()
                sendFocus()
            }
            sharingTimer = try LoopTimer(loop: loop) { [self] in
                sharingAnnouncer.retry()
                sendSharing()
            }
            lockTimer = try LoopTimer(loop: loop) { [self] in
                desktopLock.retry()
                sendLock()
            }
            systemBusTimer = try LoopTimer(loop: loop) { [self] in followLogind() }
        } catch {
            logger.critical("cannot arm timers on the bus loop", metadata: ["error": "\(error)"])
        }
        logger.info("starting", metadata: [
            "mpris": "\(configuration.mprisEnabled)", "notifications": "\(configuration.notificationsEnabled)",
            "jobs": "\(configuration.servesJobs(currentDesktop: currentDesktop))", "maxActivities": "\(configuration.maxActivities)",
            "followDoNotDisturb": "\(configuration.followDoNotDisturb)", "followScreenSharing": "\(configuration.followScreenSharing)",
            "followLock": "\(configuration.followLock)",
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
                group.addTask { [connection, logger] in _ = await command.run(on: connection, logger: logger) }
            }
        }
        bookTimer = nil
        busTimer = nil
        daemonTimer = nil
        focusTimer = nil
        sharingTimer = nil
        lockTimer = nil
        systemBusTimer = nil
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
        if enabledSources(old) != enabledSources(new) || old.maxJobs != new.maxJobs || old.maxJobsPerSender != new.maxJobsPerSender {
            endBusSources()
            connectBus()
        } else {
            sources?.mpris?.staleAfterPause = new.staleAfterPause
            pump()
        }
        if old.followDoNotDisturb != new.followDoNotDisturb { followDoNotDisturb() }
        if old.followScreenSharing != new.followScreenSharing { followScreenSharing() }
        if old.followLock != new.followLock { followLock() }
    }

    private func enabledSources(_ configuration: BridgeConfiguration) -> SessionSources.Enabled {
        SessionSources.Enabled(mpris: configuration.mprisEnabled, notifications: configuration.notificationsEnabled,
                               jobs: configuration.servesJobs(currentDesktop: currentDesktop))
    }

    // MARK: Reconnecting

    /// The waits before trying a connection (the bus, or islandd) again after failed tries:
    /// doubling, from a second to half a minute.
    private static let reconnect = Backoff(first: .seconds(1), maximum: .seconds(30))

    /// A bus that was there and went (dbus-daemon restarted) is likely back at once.
    private static let busLostRetry = Duration.milliseconds(100)
    /// An islandd that refuses the bridge will not change its mind soon.
    private static let refusedRetry = Duration.seconds(60)

    // MARK: The bus

    private func connectBus() {
        guard !stopping, bus == nil else { return }
        let connected: Bus
        do {
            connected = try Bus.connect(address: busAddress, loop: loop, description: "island-bridge") { [self] in busLost() }
        } catch {
            let wait = Self.reconnect.delay(attempt: busAttempts)
            busAttempts += 1
            logger.warning("cannot connect to the session bus; retrying", metadata: ["error": "\(error)", "retryIn": "\(wait)"])
            busTimer?.arm(after: wait)
            return
        }
        busAttempts = 0
        logger.info("connected to the session bus", metadata: ["name": "\(connected.uniqueName)"])
        let bus = SDBusSourceBus(connected, address: busAddress, logger: logger)
        let context = SourceContext(busID: String(connected.busID.prefix(12)), changes: { [self] in apply($0) },
                                    readEnded: { [self] in settleIfScanned() }, lookup: { [self] in entries.lookup($0) },
                                    now: { Self.now }, logger: logger)
        let sources = SessionSources(bus: bus, context: context, enabled: enabledSources(configuration),
                                     staleAfterPause: configuration.staleAfterPause, maximumJobs: configuration.maxJobs,
                                     maximumJobsPerSender: configuration.maxJobsPerSender)
        self.bus = bus
        self.sources = sources
        sources.start()
        followDoNotDisturb()
        screenCastRefusalLogged = false
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
        busAttempts = 0
        busTimer?.arm(after: Self.busLostRetry)
    }

    /// Ends what came from the bus and lets go of it.
    private func endBusSources() {
        if let sources { apply(sources.end()) }
        dropBus()
    }

    private func dropBus() {
        sources = nil
        stopFollowingDoNotDisturb()
        stopFollowingScreenSharing()
        stopFollowingLock()
        bus?.close()
        bus = nil
    }

    private func settleIfScanned() {
        guard sources?.isScanned ?? true, daemonListed else { return }
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
        daemonAttempts = 0
        logger.info("connected to islandd", metadata: [
            "socket": "\(connection.configuration.socketPath)", "enabled": "\(info.enabled)",
            "maxActivitiesPerApp": "\(info.limits[ProducerNames.Limits.maxActivitiesPerApp]?.intValue.map(String.init) ?? "?")",
        ])
        book.authorized(enabled: info.enabled, maximumActivities: info.limits[ProducerNames.Limits.maxActivitiesPerApp]?.intValue)
        book.adopt(listed.map(Self.listed))
        daemonListed = true
        desktopFocus.retry()
        sendFocus()
        // A daemon that restarted starts unshared: tell it again while something is cast.
        if configuration.followScreenSharing, screenCastMonitor != nil, let source = screenCasts.sharedBy {
            sharingAnnouncer.shared(by: source, again: true)
        }
        sharingAnnouncer.retry()
        sendSharing()
        announceLockAgain()
        events = Task {
            for await event in stream { self.handle(event) }
        }
        settleIfScanned()
        pump()
    }

    private func daemonRefused(_ error: ActivityAuthorizationError) {
        if case .daemonUnavailable = error {
            let wait = Self.reconnect.delay(attempt: daemonAttempts)
            daemonAttempts += 1
            logger.warning("islandd is not reachable; retrying", metadata: ["error": "\(error)", "retryIn": "\(wait)"])
            daemonTimer?.arm(after: wait)
            return
        }
        // Unentitled or denied at the first call: IslandKit's connection gave up; the book
        // waits for an authorization event that will not come, so try again, slowly.
        logger.warning("islandd refuses the bridge", metadata: ["error": "\(error)"])
        daemonTimer?.arm(after: Self.refusedRetry)
    }

    private func handle(_ event: ActivityEvent) {
        switch event.kind {
        case .state:
            if let activity = event.activity, activity.state == .ended || activity.state == .dismissed {
                book.daemonEnded(id: activity.id, reason: activity.endReason?.rawValue)
            }
        case .authorization:
            if let info = event.authorization {
                book.authorized(enabled: info.enabled, maximumActivities: info.limits[ProducerNames.Limits.maxActivitiesPerApp]?.intValue)
            }
        case .resync:
            book.daemonReconnected()
            // The connection came back, perhaps to a daemon that restarted and starts unlocked.
            announceLockAgain()
        case .tap:
            if let key = sourceKey(of: event) { sources?.tapped(key) }
        case .button:
            if let key = sourceKey(of: event), let action = event.action { sources?.pressed(action, on: key) }
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

    // MARK: Do Not Disturb

    /// Follows the desktop's switches on the bus when the configuration says so; stops
    /// following them otherwise (focus stays as it is). GNOME's setting only in a GNOME
    /// session: elsewhere it is a leftover of one, which the user no longer sees.
    private func followDoNotDisturb() {
        guard configuration.followDoNotDisturb, let bus else { return stopFollowingDoNotDisturb() }
        guard desktopSwitches.isEmpty else { return }
        var switches: [(DesktopFocus.Switch, any DesktopSwitch)] = [
            (.dunst, ServerSwitch(bus: bus, property: ServerSwitch.dunstPause) { [self] in focusRead(.dunst, $0) }),
            (.kde, ServerSwitch(bus: bus, property: ServerSwitch.kdeInhibition) { [self] in focusRead(.kde, $0) }),
            (.swaync, SwayncDnd(bus: bus) { [self] in focusRead(.swaync, $0) }),
            (.mako, MakoMode(bus: bus) { [self] in focusRead(.mako, $0) }),
        ]
        let desktops = (currentDesktop ?? "").split(separator: ":").map { $0.uppercased() }
        if desktops.contains("GNOME") {
            let banners = GnomeBanners(bus: bus, read: { [self] in readGnomeBanners() }, reading: { [self] in focusRead(.gnome, $0) })
            gnomeBanners = banners
            switches.append((.gnome, banners))
        }
        for (source, desktopSwitch) in switches {
            do {
                try desktopSwitch.start()
                desktopSwitches.append(desktopSwitch)
            } catch {
                logger.error("cannot follow \(source.name)", metadata: ["error": "\(error)"])
            }
        }
    }

    private func stopFollowingDoNotDisturb() {
        for desktopSwitch in desktopSwitches { desktopSwitch.stop() }
        desktopSwitches = []
        gnomeBanners = nil
    }

    private func readGnomeBanners() {
        GSettingsReader.readBool(schema: "org.gnome.desktop.notifications", key: "show-banners") { banners in
            Task { await self.gnomeBannersRead(banners) }
        }
    }

    private func gnomeBannersRead(_ banners: Bool?) {
        gnomeBanners?.answered(banners)
    }

    private func focusRead(_ source: DesktopFocus.Switch, _ doNotDisturb: Bool?) {
        if let change = desktopFocus.read(source, doNotDisturb: doNotDisturb) { logger.info("\(change)") }
        sendFocus()
    }

    private func sendFocus() {
        guard !stopping, let on = desktopFocus.nextCall() else { return }
        Task { [connection, logger] in
            let succeeded = await Self.setFocus(on, socketPath: connection.configuration.socketPath, logger: logger)
            self.focusSent(on, succeeded: succeeded)
        }
    }

    /// A call that failed is tried again after the waits of a reconnection.
    private func focusSent(_ on: Bool, succeeded: Bool) {
        desktopFocus.completed(on, succeeded: succeeded)
        if succeeded {
            focusAttempts = 0
        } else {
            focusTimer?.arm(after: Self.reconnect.delay(attempt: focusAttempts))
            focusAttempts += 1
        }
        sendFocus()
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

    private static func setFocus(_ on: Bool, socketPath: String, logger: Logger) async -> Bool {
        guard let reply = await admin(AdminNames.SetFocus.method, [AdminNames.SetFocus.on: .bool(on)], socketPath: socketPath, logger: logger) else {
            return false
        }
        logger.info("set islandd's focus", metadata: ["on": "\(reply[AdminNames.SetFocus.focus]?[AdminNames.Focus.on]?.boolValue ?? on)"])
        return true
    }

    // MARK: Screen sharing

    /// Follows the screen-cast sessions on the bus, on a monitor connection of their own, when
    /// the configuration says so, and tells islandd what they add up to — at once too, since
    /// the bridge cannot know what was said before it (or before the bus came back). Stops
    /// following them otherwise (sharing stays as it is). A bus that refuses to make a monitor
    /// (`BecomeMonitor`) is said once: nothing is detected then.
    private func followScreenSharing() {
        guard configuration.followScreenSharing, let bus else { return stopFollowingScreenSharing() }
        guard screenCastMonitor == nil else { return }
        do {
            screenCastMonitor = try bus.monitor(rules: ScreenCastEvent.monitorRules) { [self] message in
                // Most messages (a call starting, or refused) change nothing to act on: a
                // flood of them costs a look-up each, never a round trip to the bus.
                guard let event = ScreenCastEvent(message), screenCasts.observe(event) else { return }
                screenCastsChanged()
            }
        } catch {
            if !screenCastRefusalLogged {
                screenCastRefusalLogged = true
                logger.error("cannot watch screen casts (BecomeMonitor refused): sharing the screen will not hide activity content",
                             metadata: ["error": "\(error)"])
            }
            return
        }
        logger.info("following screen casts (xdg-desktop-portal ScreenCast, Mutter ScreenCast)")
        sharingAnnouncer.shared(by: screenCasts.sharedBy, again: true)
        sendSharing()
    }

    private func stopFollowingScreenSharing() {
        screenCastMonitor = nil
        screenCastPeers = [:]
        screenCasts.reset()
        sharedBefore = nil
    }

    /// After what the monitor saw or a peer leaving: the peers followed, and islandd told
    /// when the screen's being shared changed.
    private func screenCastsChanged() {
        let peers = screenCasts.peers
        for name in screenCastPeers.keys where !peers.contains(name) { screenCastPeers[name] = nil }
        for name in peers where screenCastPeers[name] == nil {
            do {
                screenCastPeers[name] = try bus?.track(name) { [self] in
                    screenCasts.left(name)
                    // Not from inside the tracker's own callback.
                    bus?.afterDispatch { [self] in screenCastsChanged() }
                }
            } catch {
                logger.debug("cannot follow a screen cast's peer", metadata: ["name": "\(name)", "error": "\(error)"])
            }
        }
        let shared = screenCasts.sharedBy
        if shared != sharedBefore {
            if let shared {
                logger.info("the screen is shared", metadata: ["by": "\(shared.rawValue)", "sessions": "\(screenCasts.sessionCount)"])
            } else {
                logger.info("the screen is no longer shared")
            }
            sharedBefore = shared
        }
        sharingAnnouncer.shared(by: shared)
        sendSharing()
    }

    private func sendSharing() {
        guard !stopping, let wish = sharingAnnouncer.nextCall() else { return }
        Task { [connection, logger] in
            let succeeded = await Self.setSharing(wish, socketPath: connection.configuration.socketPath, logger: logger)
            self.sharingSent(wish, succeeded: succeeded)
        }
    }

    private func sharingSent(_ wish: SharingAnnouncer.Wish, succeeded: Bool) {
        sharingAnnouncer.completed(wish, succeeded: succeeded)
        if succeeded {
            sharingAttempts = 0
        } else {
            sharingTimer?.arm(after: Self.reconnect.delay(attempt: sharingAttempts))
            sharingAttempts += 1
        }
        sendSharing()
    }

    private static func setSharing(_ wish: SharingAnnouncer.Wish, socketPath: String, logger: Logger) async -> Bool {
        var parameters: JSONObject = [AdminNames.SetSharing.on: .bool(wish.on)]
        if let source = wish.source { parameters[AdminNames.SetSharing.source] = .string(source.rawValue) }
        guard let reply = await admin(AdminNames.SetSharing.method, parameters, socketPath: socketPath, logger: logger) else {
            return false
        }
        logger.info("set islandd's sharing", metadata: [
            "on": "\(wish.on)", "contentHidden": "\(reply[AdminNames.SetSharing.sharing]?[AdminNames.Sharing.contentHidden]?.boolValue ?? false)",
        ])
        return true
    }

    // MARK: The session lock

    /// Follows the desktop's lock reports when the configuration says so — GNOME Shell's and the
    /// freedesktop screensaver's on the session bus, logind's `LockedHint` on the system bus —
    /// and tells islandd what they add up to, at once too (the bridge cannot know what was said
    /// before it). Stops following them otherwise (the lock stays as it is).
    private func followLock() {
        guard configuration.followLock, let bus else { return stopFollowingLock() }
        guard lockSignals.isEmpty else { return }
        for kind in [LockSignal.Kind.gnome, .freedesktop] {
            let signal = LockSignal(kind, bus: bus) { [self] in lockRead(kind, $0) }
            do {
                try signal.start()
                lockSignals.append(signal)
            } catch {
                logger.error("cannot follow \(kind.service)", metadata: ["error": "\(error)"])
            }
        }
        logger.info("following the session lock (org.gnome.ScreenSaver, org.freedesktop.ScreenSaver, logind's LockedHint)")
        desktopLock.announceAgain()
        sendLock()
        followLogind()
    }

    /// logind's report, on a system bus connection of its own; one that fails or goes away is
    /// tried again after the waits of a reconnection (logind's report reads nil meanwhile).
    private func followLogind() {
        guard !stopping, configuration.followLock, bus != nil, systemBus == nil else { return }
        // A machine with no system bus at all (a container, a test) has no logind to follow:
        // retrying would wake the bridge every 30 s for ever. The screensavers are still read.
        if systemBusAddress.hasPrefix("unix:path="), !FileManager.default.fileExists(atPath: String(systemBusAddress.dropFirst("unix:path=".count))) {
            logger.info("no system bus here, so logind's LockedHint is not followed", metadata: ["address": "\(systemBusAddress)"])
            return
        }
        let connected: Bus
        do {
            connected = try Bus.connect(address: systemBusAddress, loop: loop, description: "island-bridge-logind") { [self] in
                systemBusLost()
            }
        } catch {
            let wait = Self.reconnect.delay(attempt: systemBusAttempts)
            systemBusAttempts += 1
            logger.warning("cannot connect to the system bus for logind's LockedHint; retrying",
                           metadata: ["error": "\(error)", "retryIn": "\(wait)"])
            systemBusTimer?.arm(after: wait)
            return
        }
        systemBusAttempts = 0
        let systemBus = SDBusSourceBus(connected, address: systemBusAddress, logger: logger)
        let signal = LockSignal(.logind, bus: systemBus, sessionID: sessionID) { [self] in lockRead(.logind, $0) }
        do {
            try signal.start()
        } catch {
            logger.error("cannot follow logind's LockedHint", metadata: ["error": "\(error)"])
            systemBus.close()
            return
        }
        self.systemBus = systemBus
        lockSignals.append(signal)
    }

    private func systemBusLost() {
        logger.warning("lost the system bus; reconnecting for logind's LockedHint")
        dropSystemBus()
        guard !stopping else { return }
        systemBusTimer?.arm(after: Self.busLostRetry)
    }

    private func dropSystemBus() {
        for signal in lockSignals where signal.kind.isOnSystemBus { signal.stop() }
        lockSignals.removeAll { $0.kind.isOnSystemBus }
        systemBus?.close()
        systemBus = nil
        if let change = desktopLock.forget([.logind]) { logger.info("\(change)") }
        sendLock()
    }

    private func stopFollowingLock() {
        for signal in lockSignals { signal.stop() }
        lockSignals = []
        systemBusTimer?.disarm()
        systemBus?.close()
        systemBus = nil
        // Forgotten without a word to islandd: not following, the lock stays as it is (as after
        // the bus went away, until the reports are read again).
        desktopLock.stopFollowing()
    }

    /// A daemon that restarted starts unlocked: it is told again while the session is locked.
    private func announceLockAgain() {
        if configuration.followLock, !lockSignals.isEmpty, desktopLock.lockedBy != nil { desktopLock.announceAgain() }
        desktopLock.retry()
        sendLock()
    }

    private func lockRead(_ kind: LockSignal.Kind, _ locked: Bool?) {
        logger.debug("lock report: \(kind.rawValue) says \(locked.map { $0 ? "locked" : "unlocked" } ?? "nothing")")
        if let change = desktopLock.read(kind, locked: locked) { logger.info("\(change)") }
        sendLock()
    }

    private func sendLock() {
        guard !stopping, let wish = desktopLock.nextCall() else { return }
        Task { [connection, logger] in
            let succeeded = await Self.setLock(wish, socketPath: connection.configuration.socketPath, logger: logger)
            self.lockSent(wish, succeeded: succeeded)
        }
    }

    private func lockSent(_ wish: DesktopLock.Wish, succeeded: Bool) {
        desktopLock.completed(wish, succeeded: succeeded)
        if succeeded {
            lockAttempts = 0
        } else {
            lockTimer?.arm(after: Self.reconnect.delay(attempt: lockAttempts))
            lockAttempts += 1
        }
        sendLock()
    }

    private static func setLock(_ wish: DesktopLock.Wish, socketPath: String, logger: Logger) async -> Bool {
        var parameters: JSONObject = [AdminNames.SetLock.on: .bool(wish.on)]
        if let source = wish.source { parameters[AdminNames.SetLock.source] = .string(source.rawValue) }
        guard await admin(AdminNames.SetLock.method, parameters, socketPath: socketPath, logger: logger) != nil else { return false }
        logger.info("set islandd's lock", metadata: ["on": "\(wish.on)"])
        return true
    }

    static func listed(_ activity: ActivitySnapshot) -> ActivityBook.Listed {
        ActivityBook.Listed(id: activity.id, source: activity.attributes["source"]?.stringValue,
                            content: BridgedContent(activity.content))
    }
}
