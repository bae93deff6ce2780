import CSystemd
import Glibc

/// A connection to a message bus (the session bus, or a bus at an address), dispatched by a
/// `BusLoop`: matches, method calls and their replies, names, served objects and signals.
///
/// A bus belongs to its loop's thread: create it, use it and close it there (from an actor
/// whose executor is the loop). Callbacks run on that thread too, while the loop dispatches.
public final class Bus {
    let handle: OpaquePointer
    public let loop: BusLoop
    /// The bus's unique name for this connection (`:1.42`).
    public let uniqueName: String
    private var disconnectWatch: BusSlot?

    private init(handle: OpaquePointer, loop: BusLoop, uniqueName: String) {
        self.handle = handle
        self.loop = loop
        self.uniqueName = uniqueName
    }

    deinit {
        close()
    }

    /// Connects to the bus at `address` (a D-Bus address such as `unix:path=/run/user/1000/bus`),
    /// or to the user's session bus when nil (`DBUS_SESSION_BUS_ADDRESS`, else
    /// `$XDG_RUNTIME_DIR/bus`), and attaches it to `loop`. Waits for the bus's `Hello` reply,
    /// which names the connection. `onDisconnect` runs once if the bus goes away.
    public static func connect(
        address: String? = nil, loop: BusLoop, description: String,
        onDisconnect: @escaping () -> Void
    ) throws(BusError) -> Bus {
        let handle = try open(address: address, description: description, monitor: false)
        let bus = try attach(handle, loop: loop)
        bus.disconnectWatch = try bus.addLocalDisconnectWatch(onDisconnect)
        return bus
    }

    /// Connects a second connection that becomes a monitor (`BecomeMonitor`) for `rules`: it
    /// then receives every message on the bus matching them, method calls and replies between
    /// other peers included, and never sends anything again. `handler` gets each message;
    /// `onDisconnect` runs once if the bus goes away.
    public static func monitor(
        address: String? = nil, rules: [String], loop: BusLoop, description: String,
        handler: @escaping (BusMessage) -> Void,
        onDisconnect: @escaping () -> Void
    ) throws(BusError) -> Bus {
        let handle = try open(address: address, description: description, monitor: true)
        let bus = try attach(handle, loop: loop)
        bus.disconnectWatch = try bus.addLocalDisconnectWatch(onDisconnect)
        // Synchronous: nothing but the reply arrives before it, and every message after it is
        // one to pass on.
        let call = try bus.newCall(
            destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus",
            interface: "org.freedesktop.DBus.Monitoring", member: "BecomeMonitor")
        try call.append([.strings(rules), .uint32(0)])
        var error = sd_bus_error()
        defer { sd_bus_error_free(&error) }
        let result = sd_bus_call(handle, call.handle, 5_000_000, &error, nil)
        if result < 0 {
            throw sd_bus_error_is_set(&error) != 0 ? BusError(&error) : BusError(errno: result, doing: "BecomeMonitor")
        }
        // A filter sees every message before anything else would answer it (a monitor must
        // never reply), and claims it; only sd-bus's own Disconnected goes on to its match.
        // What the bus says to the monitor itself (it loses its unique name) is not traffic.
        let ownName = bus.uniqueName
        bus.monitorFilter = try bus.addFilter { message in
            if message.sender == "org.freedesktop.DBus.Local" { return false }
            if message.destination != ownName { handler(message) }
            return true
        }
        return bus
    }

    private var monitorFilter: BusSlot?

    private static func open(address: String?, description: String, monitor: Bool) throws(BusError) -> OpaquePointer {
        var bus: OpaquePointer?
        func check(_ result: Int32, _ doing: String) throws(BusError) {
            if result < 0 {
                sd_bus_unref(bus)
                throw BusError(errno: result, doing: doing)
            }
        }
        try check(sd_bus_new(&bus), "sd_bus_new")
        if let address {
            try check(sd_bus_set_address(bus, address), "sd_bus_set_address")
        } else if let environment = getenv("DBUS_SESSION_BUS_ADDRESS") {
            try check(sd_bus_set_address(bus, environment), "sd_bus_set_address")
        } else if let runtime = getenv("XDG_RUNTIME_DIR") {
            try check(sd_bus_set_address(bus, "unix:path=\(String(cString: runtime))/bus"), "sd_bus_set_address")
        } else {
            try check(-ENOENT, "finding the session bus (neither DBUS_SESSION_BUS_ADDRESS nor XDG_RUNTIME_DIR is set)")
        }
        try check(sd_bus_set_bus_client(bus, 1), "sd_bus_set_bus_client")
        try check(sd_bus_set_description(bus, description), "sd_bus_set_description")
        if monitor { try check(sd_bus_set_monitor(bus, 1), "sd_bus_set_monitor") }
        try check(sd_bus_start(bus), "connecting to the bus")
        return bus!
    }

    private static func attach(_ handle: OpaquePointer, loop: BusLoop) throws(BusError) -> Bus {
        let attached = sd_bus_attach_event(handle, loop.event, 0)
        guard attached >= 0 else {
            sd_bus_flush_close_unref(handle)
            throw BusError(errno: attached, doing: "sd_bus_attach_event")
        }
        var unique: UnsafePointer<CChar>?
        let named = sd_bus_get_unique_name(handle, &unique)
        guard named >= 0, let unique else {
            sd_bus_detach_event(handle)
            sd_bus_flush_close_unref(handle)
            throw BusError(errno: named, doing: "connecting to the bus")
        }
        return Bus(handle: handle, loop: loop, uniqueName: String(cString: unique))
    }

    private var isClosed = false

    /// Drops every match, call and object of this connection and closes it.
    public func close() {
        guard !isClosed else { return }
        isClosed = true
        disconnectWatch = nil
        monitorFilter = nil
        sd_bus_detach_event(handle)
        sd_bus_flush_close_unref(handle)
    }

    /// The bus's id (the server GUID of its address, 32 hex digits): a new bus, even on the same
    /// address, has a new one, and unique names start over with it.
    public var busID: String {
        var id = sd_id128_t()
        guard sd_bus_get_bus_id(handle, &id) >= 0 else { return "" }
        return withUnsafeBytes(of: id) { bytes in
            bytes.map { byte in
                let digits = Array("0123456789abcdef".utf8)
                return String(decoding: [digits[Int(byte >> 4)], digits[Int(byte & 0xF)]], as: UTF8.self)
            }.joined()
        }
    }

    /// Whether the connection is still up.
    public var isOpen: Bool { !isClosed && sd_bus_is_open(handle) > 0 }

    private func addLocalDisconnectWatch(_ body: @escaping () -> Void) throws(BusError) -> BusSlot {
        var fired = false
        // sd-bus synthesizes this signal locally when the connection drops; a match on the
        // local sender is never sent to the bus.
        return try addMatch("type='signal',sender='org.freedesktop.DBus.Local',interface='org.freedesktop.DBus.Local',member='Disconnected'") { _ in
            guard !fired else { return }
            fired = true
            body()
        }
    }

    // MARK: Matches and filters

    /// Calls `handler` with every message matching `rule` (D-Bus match rule syntax) for as
    /// long as the returned slot lives. The rule is installed on the bus asynchronously.
    public func addMatch(_ rule: String, _ handler: @escaping (BusMessage) -> Void) throws(BusError) -> BusSlot {
        let box = MessageHandlerBox { message in
            handler(message)
            return false
        }
        var slot: OpaquePointer?
        let result = sd_bus_add_match_async(handle, &slot, rule, messageTrampoline, nil, Unmanaged.passUnretained(box).toOpaque())
        guard result >= 0, let slot else { throw BusError(errno: result, doing: "adding the match \(rule)") }
        return BusSlot(slot, keeping: box)
    }

    /// Calls `handler` with every message the connection receives, before anything else
    /// handles it; `true` from the handler claims the message.
    func addFilter(_ handler: @escaping (BusMessage) -> Bool) throws(BusError) -> BusSlot {
        let box = MessageHandlerBox(handler)
        var slot: OpaquePointer?
        let result = sd_bus_add_filter(handle, &slot, messageTrampoline, Unmanaged.passUnretained(box).toOpaque())
        guard result >= 0, let slot else { throw BusError(errno: result, doing: "adding a filter") }
        return BusSlot(slot, keeping: box)
    }

    // MARK: Calls

    func newCall(destination: String, path: String, interface: String, member: String) throws(BusError) -> BusMessage {
        var message: OpaquePointer?
        let result = sd_bus_message_new_method_call(handle, &message, destination, path, interface, member)
        guard result >= 0, let message else { throw BusError(errno: result, doing: "calling \(interface).\(member)") }
        return BusMessage(adopting: message)
    }

    /// Calls a method; `reply` gets the reply, or the error (an error reply, a timeout, the
    /// peer or the bus gone). Never blocks.
    public func call(
        destination: String, path: String, interface: String, member: String, arguments: [BusValue] = [],
        timeout: Duration = .seconds(25),
        reply: @escaping (Result<BusMessage, BusError>) -> Void
    ) throws(BusError) {
        let call = try newCall(destination: destination, path: path, interface: interface, member: member)
        try call.append(arguments)
        let box = MessageHandlerBox { message in
            if let error = message.error {
                reply(.failure(error))
            } else {
                reply(.success(message))
            }
            return true
        }
        var slot: OpaquePointer?
        let usec = UInt64(max(1, timeout.components.seconds * 1_000_000 + timeout.components.attoseconds / 1_000_000_000_000))
        let result = sd_bus_call_async(handle, &slot, call.handle, messageTrampoline, Unmanaged.passRetained(box).toOpaque(), usec)
        guard result >= 0, let slot else {
            Unmanaged.passUnretained(box).release()
            throw BusError(errno: result, doing: "calling \(interface).\(member) on \(destination)")
        }
        // The bus owns the call from here; the box goes with the slot.
        sd_bus_slot_set_destroy_callback(slot, releaseBox)
        sd_bus_slot_set_floating(slot, 1)
        sd_bus_slot_unref(slot)
    }

    /// Calls a method whose reply does not matter (the call says so, and the peer sends none).
    public func send(destination: String, path: String, interface: String, member: String, arguments: [BusValue] = []) throws(BusError) {
        let call = try newCall(destination: destination, path: path, interface: interface, member: member)
        try call.append(arguments)
        _ = sd_bus_message_set_expect_reply(call.handle, 0)
        let result = sd_bus_send(handle, call.handle, nil)
        if result < 0 { throw BusError(errno: result, doing: "calling \(interface).\(member) on \(destination)") }
    }

    /// Emits a signal from `path`, to every peer that matches it.
    public func emitSignal(path: String, interface: String, member: String, arguments: [BusValue] = []) throws(BusError) {
        var message: OpaquePointer?
        let created = sd_bus_message_new_signal(handle, &message, path, interface, member)
        guard created >= 0, let message else { throw BusError(errno: created, doing: "emitting \(interface).\(member)") }
        let signal = BusMessage(adopting: message)
        try signal.append(arguments)
        let result = sd_bus_send(handle, signal.handle, nil)
        if result < 0 { throw BusError(errno: result, doing: "emitting \(interface).\(member)") }
    }

    // MARK: Names

    /// What `RequestName` answered.
    public enum NameOwnership: Sendable, Hashable {
        /// The connection owns the name now.
        case owner
        /// Another connection owns it; this one waits in the queue.
        case queued
        /// Another connection owns it and this one did not ask to queue.
        case taken
    }

    /// Asks the bus for a well-known name, without blocking. With `allowReplacement`, another
    /// connection asking to replace us gets the name (we hear `NameLost`); with `queue`, we
    /// get it once its owners leave (we hear `NameAcquired`).
    public func requestName(
        _ name: String, allowReplacement: Bool, queue: Bool,
        completion: @escaping (Result<NameOwnership, BusError>) -> Void
    ) throws(BusError) {
        // The D-Bus specification's flags (not sd-bus's own SD_BUS_NAME_*).
        let allowReplacementFlag: UInt32 = 0x1, doNotQueueFlag: UInt32 = 0x4
        let flags = (allowReplacement ? allowReplacementFlag : 0) | (queue ? 0 : doNotQueueFlag)
        try call(
            destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus",
            member: "RequestName", arguments: [.string(name), .uint32(flags)]
        ) { result in
            completion(
                result.flatMap { reply in
                    // 1 primary owner, 2 in queue, 3 exists, 4 already the owner.
                    switch (try? reply.arguments())?.first?.integer {
                    case 1, 4: .success(.owner)
                    case 2: .success(.queued)
                    case 3: .success(.taken)
                    default: .failure(BusError(name: BusError.invalidArgs, message: "RequestName answered \(reply.signature)"))
                    }
                })
        }
    }

    /// Calls `handler` once every name in `names` has left the bus (one empty tracker per
    /// call), as long as the returned tracker lives. Use it to follow a client's lifetime by
    /// its unique name.
    public func track(_ names: [String], whenGone handler: @escaping () -> Void) throws(BusError) -> BusNameTracker {
        let box = TrackerBox(handler)
        var track: OpaquePointer?
        let created = sd_bus_track_new(handle, &track, trackerTrampoline, Unmanaged.passUnretained(box).toOpaque())
        guard created >= 0, let track else { throw BusError(errno: created, doing: "sd_bus_track_new") }
        let tracker = BusNameTracker(track, keeping: box)
        for name in names {
            let added = sd_bus_track_add_name(track, name)
            // A name already gone leaves the tracker empty: the handler runs from the loop.
            if added < 0, added != -ENXIO, added != -ESRCH { throw BusError(errno: added, doing: "tracking \(name)") }
        }
        return tracker
    }
}

// MARK: Callback plumbing

/// A message callback and the Swift closure it calls.
final class MessageHandlerBox {
    let handler: (BusMessage) -> Bool
    init(_ handler: @escaping (BusMessage) -> Bool) { self.handler = handler }
}

let messageTrampoline: sd_bus_message_handler_t = { message, userdata, _ in
    guard let message, let userdata else { return 0 }
    let box = Unmanaged<MessageHandlerBox>.fromOpaque(userdata).takeUnretainedValue()
    return box.handler(BusMessage(referencing: message)) ? 1 : 0
}

/// Releases the retained box of a floating slot when sd-bus destroys the slot.
let releaseBox: sd_bus_destroy_t = { userdata in
    guard let userdata else { return }
    Unmanaged<AnyObject>.fromOpaque(userdata).release()
}

/// A match, a filter or a served object: in force while this object lives.
public final class BusSlot {
    private let slot: OpaquePointer
    private let box: AnyObject

    init(_ slot: OpaquePointer, keeping box: AnyObject) {
        self.slot = slot
        self.box = box
    }

    deinit {
        sd_bus_slot_unref(slot)
    }
}

final class TrackerBox {
    let handler: () -> Void
    init(_ handler: @escaping () -> Void) { self.handler = handler }
}

let trackerTrampoline: sd_bus_track_handler_t = { _, userdata in
    guard let userdata else { return 0 }
    Unmanaged<TrackerBox>.fromOpaque(userdata).takeUnretainedValue().handler()
    // Keep the tracker; its owner drops it.
    return 1
}

/// Follows names on the bus until they are all gone; see `Bus.track(_:whenGone:)`.
public final class BusNameTracker {
    private let track: OpaquePointer
    private let box: TrackerBox

    init(_ track: OpaquePointer, keeping box: TrackerBox) {
        self.track = track
        self.box = box
    }

    deinit {
        sd_bus_track_unref(track)
    }
}
