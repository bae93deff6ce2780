import Foundation
import IslandBridge
import IslandJSON
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
        guard let sender = message.sender else { return }
        switch message.kind {
        case .methodCall:
            guard message.member == "Notify", message.signature == NotifyCall.signature,
                  let call = (try? message.arguments(limits: Self.notifyLimits)).flatMap(NotifyCall.init(arguments:))
            else { return }
            notifications.called(call, caller: sender, serial: message.serial, destination: message.destination)
        case .methodReturn:
            guard let caller = message.destination, let serial = message.replySerial, message.signature == "u",
                  case .uint32(let id) = (try? message.arguments())?.first
            else { return }
            apply(notifications.replied(from: sender, to: caller, replySerial: serial, id: id, now: Self.now) { entries.lookup($0) })
        case .error:
            if let caller = message.destination, let serial = message.replySerial {
                notifications.failed(from: sender, to: caller, replySerial: serial)
            }
        case .signal:
            guard message.member == "NotificationClosed", message.signature == "uu",
                  let arguments = try? message.arguments(), case .uint32(let id) = arguments[0], case .uint32(let reason) = arguments[1]
            else { return }
            apply(notifications.closed(id: id, reason: reason, from: sender))
        }
    }
}
