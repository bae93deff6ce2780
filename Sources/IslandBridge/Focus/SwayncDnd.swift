package import SDBus

/// SwayNotificationCenter's Do Not Disturb (`swaync-client --dnd-on`) on one bus connection:
/// `GetDnd` of the connection that owns `org.erikreider.swaync.cc`, read when that owner
/// arrives, then followed by its `SubscribeV2` (count, dnd, cc_open, inhibited) or, from an
/// older swaync, `Subscribe` (count, dnd[, cc_open]), which it sends on every change.
/// swaync has no property for it. `reading` gets true, false, or nil when swaync is not there.
///
/// Only the owner's signals count, and only a boolean in the second place.
package final class SwayncDnd {
    static let name = "org.erikreider.swaync.cc"
    static let path = "/org/erikreider/swaync/cc"
    static let interface = "org.erikreider.swaync.cc"
    static let limits = DecodingLimits(maximumValues: 8, maximumStringBytes: 64, maximumDepth: 1)

    private let bus: any SourceBus
    private let reading: (Bool?) -> Void
    private var subscriptions: [BusSubscription] = []
    private var owner: String?

    package init(bus: any SourceBus, reading: @escaping (Bool?) -> Void) {
        self.bus = bus
        self.reading = reading
    }

    package func start() throws(BusError) {
        for member in ["SubscribeV2", "Subscribe"] {
            subscriptions.append(try bus.addMatch(
                "type='signal',interface='\(Self.interface)',member='\(member)',path='\(Self.path)'"
            ) { [weak self] message in
                guard let self, let owner, message.sender == owner,
                      case let arguments = (try? message.arguments(limits: Self.limits)) ?? [], arguments.count >= 2,
                      let dnd = arguments[1].bool
                else { return }
                reading(dnd)
            })
        }
        subscriptions.append(try bus.followOwner(of: Self.name) { [weak self] owner in self?.ownerChanged(owner) })
    }

    package func stop() {
        subscriptions = []
        owner = nil
    }

    private func ownerChanged(_ new: String?) {
        owner = new
        reading(nil)
        guard let new else { return }
        do {
            try bus.call(destination: new, path: Self.path, interface: Self.interface, member: "GetDnd", arguments: [],
                         timeout: .seconds(5)) { [weak self] result in
                guard let self, self.owner == new,
                      case .success(let reply) = result, let dnd = (try? reply.arguments(limits: Self.limits))?.first?.bool
                else { return }
                reading(dnd)
            }
        } catch {
            // No read: the owner's next Subscribe says it.
        }
    }
}
