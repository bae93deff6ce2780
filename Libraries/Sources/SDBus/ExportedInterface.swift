import CSystemd
import Glibc

/// An interface an object serves on the bus: its methods and signals, as sd-bus needs them to
/// check calls (a call whose arguments do not match the signature is refused with
/// `InvalidArgs` before any handler runs) and to answer `Introspect`.
public struct ExportedInterface: Sendable, Hashable {
    public struct Method: Sendable, Hashable {
        public var name: String
        public var parameters: String
        public var results: String
        /// Declared as `org.freedesktop.DBus.Method.NoReply`: callers need not wait.
        public var noReply: Bool

        public init(_ name: String, parameters: String = "", results: String = "", noReply: Bool = false) {
            self.name = name
            self.parameters = parameters
            self.results = results
            self.noReply = noReply
        }
    }

    public struct Signal: Sendable, Hashable {
        public var name: String
        public var signature: String

        public init(_ name: String, signature: String = "") {
            self.name = name
            self.signature = signature
        }
    }

    public var name: String
    public var methods: [Method]
    public var signals: [Signal]

    public init(name: String, methods: [Method], signals: [Signal] = []) {
        self.name = name
        self.methods = methods
        self.signals = signals
    }
}

/// What a served method answers.
public enum MethodResult {
    case reply([BusValue])
    case failure(BusError)
}

extension Bus {
    /// Serves `interface` at `path` for as long as the returned slot lives. `handler` gets
    /// every call whose arguments match their method's signature, on the loop thread, and
    /// answers it (the answer is dropped when the caller asked for none).
    public func export(
        _ interface: ExportedInterface, at path: String,
        handler: @escaping (BusMessage) -> MethodResult
    ) throws(BusError) -> BusSlot {
        let table = VTable(interface)
        let box = MethodHandlerBox(table: table, handler: handler)
        var slot: OpaquePointer?
        let result = sd_bus_add_object_vtable(
            handle, &slot, path, interface.name, table.entries,
            Unmanaged.passUnretained(box).toOpaque())
        guard result >= 0, let slot else { throw BusError(errno: result, doing: "serving \(interface.name) at \(path)") }
        return BusSlot(slot, keeping: box)
    }
}

final class MethodHandlerBox {
    let table: VTable
    let handler: (BusMessage) -> MethodResult
    init(table: VTable, handler: @escaping (BusMessage) -> MethodResult) {
        self.table = table
        self.handler = handler
    }
}

private let methodTrampoline: sd_bus_message_handler_t = { message, userdata, returnError in
    guard let message, let userdata else { return -EINVAL }
    let box = Unmanaged<MethodHandlerBox>.fromOpaque(userdata).takeUnretainedValue()
    switch box.handler(BusMessage(referencing: message)) {
    case .reply(let values):
        // A call sent without expecting a reply gets none.
        guard sd_bus_message_get_expect_reply(message) > 0 else { return 1 }
        var reply: OpaquePointer?
        let created = sd_bus_message_new_method_return(message, &reply)
        guard created >= 0, let reply else { return created }
        let answer = BusMessage(adopting: reply)
        do throws(BusError) {
            try answer.append(values)
        } catch {
            return -error.errno
        }
        return sd_bus_send(nil, answer.handle, nil)
    case .failure(let error):
        return sd_bus_error_set(returnError, error.name, error.message)
    }
}

/// The C vtable of an interface and the strings it points to, alive as long as its slot.
final class VTable {
    let entries: UnsafeMutablePointer<sd_bus_vtable>
    private let count: Int
    private var strings: [UnsafeMutablePointer<CChar>] = []

    init(_ interface: ExportedInterface) {
        count = interface.methods.count + interface.signals.count + 2
        entries = .allocate(capacity: count)
        var index = 0
        func add(_ entry: sd_bus_vtable) {
            entries.advanced(by: index).initialize(to: entry)
            index += 1
        }
        var start = sd_bus_vtable()
        start.type = UInt8(ascii: "<")
        start.flags = 0
        // No parameter names (features 0): they are optional, and their format is for C macros.
        start.x.start.element_size = MemoryLayout<sd_bus_vtable>.size
        start.x.start.features = 0
        start.x.start.vtable_format_reference = nil
        add(start)
        for method in interface.methods {
            var entry = sd_bus_vtable()
            entry.type = UInt8(ascii: "M")
            entry.flags = method.noReply ? UInt64(SD_BUS_VTABLE_METHOD_NO_REPLY) : 0
            entry.x.method.member = UnsafePointer(keep(method.name))
            entry.x.method.signature = UnsafePointer(keep(method.parameters))
            entry.x.method.result = UnsafePointer(keep(method.results))
            entry.x.method.handler = methodTrampoline
            entry.x.method.offset = 0
            entry.x.method.names = nil
            add(entry)
        }
        for signal in interface.signals {
            var entry = sd_bus_vtable()
            entry.type = UInt8(ascii: "S")
            entry.flags = 0
            entry.x.signal.member = UnsafePointer(keep(signal.name))
            entry.x.signal.signature = UnsafePointer(keep(signal.signature))
            entry.x.signal.names = nil
            add(entry)
        }
        var end = sd_bus_vtable()
        end.type = UInt8(ascii: ">")
        end.flags = 0
        add(end)
    }

    private func keep(_ string: String) -> UnsafeMutablePointer<CChar> {
        let copy = strdup(string)!
        strings.append(copy)
        return copy
    }

    deinit {
        entries.deinitialize(count: count)
        entries.deallocate()
        for string in strings { free(string) }
    }
}
