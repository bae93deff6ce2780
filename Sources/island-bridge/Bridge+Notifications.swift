import Foundation
import IslandBridge
import OrderedJSON
import IslandKit
import Logging
import OrderedCollections
import SDBus

/// Progress notifications, watched by a monitor connection: the bridge sees every `Notify` to
/// the notification server and the server's answers, and never takes part.
extension Bridge {
    static let notificationsInterface = "org.freedesktop.Notifications"

    func startNotifications(on bus: Bus) {
        do {
            // Who serves notifications, now and whenever that changes: replies and closings
            // count only from that connection.
            busSlots.append(try bus.addMatch(
                "type='signal',sender='org.freedesktop.DBus',interface='org.freedesktop.DBus',member='NameOwnerChanged',arg0='\(ProgressNotifications.serverName)'"
            ) { [self] message in
                guard let arguments = try? message.arguments(), arguments.count == 3, let new = arguments[2].string else { return }
                notificationServer(new.isEmpty ? nil : new)
            })
            initialReads += 1
            try bus.call(destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus",
                         member: "GetNameOwner", arguments: [.string(ProgressNotifications.serverName)]) { [self] result in
                if case .success(let reply) = result, let owner = (try? reply.arguments())?.first?.string {
                    notificationServer(owner)
                }
                initialReads -= 1
                settleIfScanned()
            }
            monitor = try Bus.monitor(address: busAddress, rules: [
                "type='method_call',interface='\(Self.notificationsInterface)',member='Notify'",
                "type='method_call',interface='\(Self.notificationsInterface)',member='CloseNotification'",
                "type='method_return',sender='\(ProgressNotifications.serverName)'",
                "type='error',sender='\(ProgressNotifications.serverName)'",
                "type='signal',interface='\(Self.notificationsInterface)',member='NotificationClosed'",
            ], loop: loop, description: "island-bridge-monitor", handler: { [self] message in
                monitored(message)
            }, onDisconnect: { [logger] in
                // The main connection notices the same loss and reconnects both.
                logger.debug("the monitor connection closed")
            })
        } catch {
            logger.error("cannot watch notifications (BecomeMonitor)", metadata: ["error": "\(error)"])
        }
    }

    /// What a monitor reads of a message: a Notify's texts are cut later, but a 1 MB body is
    /// never read whole, nor 10,000 hints.
    static let notifyLimits = DecodingLimits(maximumValues: 256, maximumStringBytes: 2048, maximumDepth: 4)

    private func notificationServer(_ owner: String?) {
        guard owner != notifications.server else { return }
        logger.info("notification server", metadata: ["owner": "\(owner ?? "none")"])
        apply(notifications.serverChanged(to: owner))
    }

    private func monitored(_ message: BusMessage) {
        guard let event = NotificationEvent(message) else { return }
        notificationEvents.append(event)
        // A sender that never gets identified holds nothing up for ever: lookups end (the
        // bus answers or times out), and the queue is bounded.
        if notificationEvents.count > Self.maximumNotificationEvents { notificationEvents.removeFirst() }
        handleNotificationEvents()
    }

    static let maximumNotificationEvents = 512

    /// Handles what the monitor saw, in order, up to a reply whose caller is being
    /// identified: the activity it makes must show the app its sender is verified as.
    func handleNotificationEvents() {
        while let event = notificationEvents.first {
            if case .reply(_, let caller, _, _) = event, identities.isPending(caller) { return }
            notificationEvents.removeFirst()
            switch event {
            case .notify(let call, let caller, let serial, let destination):
                if notifications.called(call, caller: caller, serial: serial, destination: destination),
                   identities.known(caller) == nil {
                    identify(caller) { [self] _ in handleNotificationEvents() }
                }
            case .close(let id, let caller, let destination):
                notifications.closeCalled(id: id, caller: caller, destination: destination)
            case .reply(let sender, let caller, let serial, let id):
                apply(notifications.replied(from: sender, to: caller, replySerial: serial, id: id, now: Self.now,
                                            identity: identities.known(caller) ?? .unknown) { entries.lookup($0) })
                followNotificationOwners()
            case .error(let sender, let caller, let serial):
                notifications.failed(from: sender, to: caller, replySerial: serial)
            case .closed(let id, let reason, let sender):
                apply(notifications.closed(id: id, reason: reason, from: sender))
                followNotificationOwners()
            }
        }
    }

    /// Follows each connection with notifications until it leaves the bus: a notification of
    /// one that left can be displaced for good (`ProgressNotifications.ownerLeft`).
    private func followNotificationOwners() {
        let owners = notifications.owners
        for owner in notificationOwners.keys where !owners.contains(owner) { notificationOwners[owner] = nil }
        guard let bus else { return }
        for owner in owners where notificationOwners[owner] == nil {
            do {
                notificationOwners[owner] = try bus.track([owner]) { [self] in
                    apply(notifications.ownerLeft(owner))
                    // Not from inside the tracker's own callback.
                    Task { self.notificationOwners[owner] = nil }
                }
            } catch {
                logger.debug("cannot follow a notification's sender", metadata: ["sender": "\(owner)", "error": "\(error)"])
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

    init?(_ message: BusMessage) {
        guard let sender = message.sender else { return nil }
        switch message.kind {
        case .methodCall:
            if message.member == "CloseNotification", message.signature == "u",
               case .uint32(let id) = (try? message.arguments())?.first {
                self = .close(id: id, caller: sender, destination: message.destination)
                return
            }
            guard message.member == "Notify", message.signature == NotifyCall.signature,
                  let call = (try? message.arguments(limits: Bridge.notifyLimits)).flatMap(NotifyCall.init(arguments:))
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
