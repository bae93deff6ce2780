import Logging
import SDBus

/// Progress notifications on one bus connection, watched by a monitor connection: the source
/// sees every `Notify` to the notification server and the server's answers, and never takes
/// part. `ProgressNotifications` decides what they make of activities; this unit feeds it
/// what the bus says, in order, each reply once its caller is identified.
package final class NotificationSource {
    package static let interface = "org.freedesktop.Notifications"
    /// What the monitor holds at most while a reply's sender is being identified.
    package static let maximumEvents = 512

    private let bus: any SourceBus
    private let senders: SenderIdentities
    private let context: SourceContext
    package private(set) var notifications: ProgressNotifications
    private var subscriptions: [BusSubscription] = []
    /// What the monitor saw, in order, waiting while a reply's sender is being identified.
    private var events: [NotificationEvent] = []
    /// The connections whose notifications are followed, each until it leaves the bus.
    private var owners: [String: BusSubscription] = [:]
    package private(set) var readsUnderWay = 0

    package init(bus: any SourceBus, senders: SenderIdentities, context: SourceContext) {
        self.bus = bus
        self.senders = senders
        self.context = context
        notifications = ProgressNotifications(busID: context.busID)
    }

    /// Follows who serves notifications, and starts the monitor.
    package func start() {
        do {
            try subscribe()
        } catch {
            context.logger.error("cannot watch notifications (BecomeMonitor)", metadata: ["error": "\(error)"])
        }
    }

    private func subscribe() throws(BusError) {
        // Who serves notifications, now and whenever that changes: replies and closings
        // count only from that connection.
        subscriptions.append(
            try bus.addMatch(
                "type='signal',sender='org.freedesktop.DBus',interface='org.freedesktop.DBus',member='NameOwnerChanged',arg0='\(ProgressNotifications.serverName)'"
            ) { [weak self] message in
                guard let arguments = try? message.arguments(), arguments.count == 3, let new = arguments[2].string else { return }
                self?.serverChanged(new.isEmpty ? nil : new)
            })
        readsUnderWay += 1
        bus.owner(of: ProgressNotifications.serverName) { [weak self] owner in
            guard let self else { return }
            if let owner { serverChanged(owner) }
            readsUnderWay -= 1
            context.readEnded()
        }
        subscriptions.append(
            try bus.monitor(rules: [
                "type='method_call',interface='\(Self.interface)',member='Notify'",
                "type='method_call',interface='\(Self.interface)',member='CloseNotification'",
                "type='method_return',sender='\(ProgressNotifications.serverName)'",
                "type='error',sender='\(ProgressNotifications.serverName)'",
                "type='signal',interface='\(Self.interface)',member='NotificationClosed'",
            ]) { [weak self] message in
                self?.monitored(message)
            })
    }

    /// Every notification's activity ends: the bus is going away.
    package func end() -> [SourceChange] {
        subscriptions = []
        owners = [:]
        events = []
        return notifications.serverChanged(to: nil)
    }

    private func serverChanged(_ owner: String?) {
        guard owner != notifications.server else { return }
        context.logger.info("notification server", metadata: ["owner": "\(owner ?? "none")"])
        context.apply(notifications.serverChanged(to: owner))
    }

    func monitored(_ message: any IncomingMessage) {
        guard let event = NotificationEvent(message) else { return }
        events.append(event)
        // A sender that never gets identified holds nothing up for ever: lookups end (the
        // bus answers or times out), and the queue is bounded.
        if events.count > Self.maximumEvents { events.removeFirst() }
        handleEvents()
    }

    /// Handles what the monitor saw, in order, up to a reply whose caller is being
    /// identified: the activity it makes must show the app its sender is verified as.
    private func handleEvents() {
        while let event = events.first {
            if case .reply(_, let caller, _, _) = event, senders.isPending(caller) { return }
            events.removeFirst()
            switch event {
            case .notify(let call, let caller, let serial, let destination):
                if notifications.called(call, caller: caller, serial: serial, destination: destination),
                    senders.known(caller) == nil
                {
                    senders.identify(caller) { [weak self] _ in self?.handleEvents() }
                }
            case .close(let id, let caller, let destination):
                notifications.closeCalled(id: id, caller: caller, destination: destination)
            case .reply(let sender, let caller, let serial, let id):
                context.apply(
                    notifications.replied(
                        from: sender, to: caller, replySerial: serial, id: id, now: context.now(),
                        identity: senders.known(caller) ?? .unknown, lookup: context.lookup))
                followOwners()
            case .error(let sender, let caller, let serial):
                notifications.failed(from: sender, to: caller, replySerial: serial)
            case .closed(let id, let reason, let sender):
                context.apply(notifications.closed(id: id, reason: reason, from: sender))
                followOwners()
            }
        }
    }

    /// Follows each connection with notifications until it leaves the bus: a notification of
    /// one that left can be displaced for good (`ProgressNotifications.ownerLeft`).
    private func followOwners() {
        let current = notifications.owners
        for owner in owners.keys where !current.contains(owner) { owners[owner] = nil }
        for owner in current where owners[owner] == nil {
            do {
                owners[owner] = try bus.track(owner) { [weak self] in
                    guard let self else { return }
                    context.apply(notifications.ownerLeft(owner))
                    // Not from inside the tracker's own callback.
                    bus.afterDispatch { [weak self] in self?.owners[owner] = nil }
                }
            } catch {
                context.logger.debug("cannot follow a notification's sender", metadata: ["sender": "\(owner)", "error": "\(error)"])
            }
        }
    }
}

/// What the monitor saw that concerns notifications.
enum NotificationEvent {
    case notify(NotifyCall, caller: String, serial: UInt64, destination: String?)
    case close(id: UInt32, caller: String, destination: String?)
    case reply(sender: String, caller: String, serial: UInt64, id: UInt32)
    case error(sender: String, caller: String, serial: UInt64)
    case closed(id: UInt32, reason: UInt32, sender: String)

    /// What a monitor reads of a message: a Notify's texts are cut later, but a 1 MB body is
    /// never read whole, nor 10,000 hints.
    static let notifyLimits = DecodingLimits(maximumValues: 256, maximumStringBytes: 2048, maximumDepth: 4)

    init?(_ message: any IncomingMessage) {
        guard let sender = message.sender else { return nil }
        switch message.kind {
        case .methodCall:
            if message.member == "CloseNotification", message.signature == "u",
                case .uint32(let id) = (try? message.arguments())?.first
            {
                self = .close(id: id, caller: sender, destination: message.destination)
                return
            }
            guard message.member == "Notify", message.signature == NotifyCall.signature,
                let call = (try? message.arguments(limits: Self.notifyLimits)).flatMap(NotifyCall.init(arguments:))
            else { return nil }
            self = .notify(call, caller: sender, serial: message.serial, destination: message.destination)
        case .methodReturn:
            guard let caller = message.destination, let serial = message.replySerial, message.signature == "u",
                case .uint32(let id) = (try? message.arguments())?.first
            else { return nil }
            self = .reply(sender: sender, caller: caller, serial: serial, id: id)
        case .error:
            guard let caller = message.destination, let serial = message.replySerial else { return nil }
            self = .error(sender: sender, caller: caller, serial: serial)
        case .signal:
            guard message.member == "NotificationClosed", message.signature == "uu",
                let arguments = try? message.arguments(), case .uint32(let id) = arguments[0], case .uint32(let reason) = arguments[1]
            else { return nil }
            self = .closed(id: id, reason: reason, sender: sender)
        }
    }
}
