import CSystemd
import Glibc

/// A D-Bus message: one sd-bus message, referenced for as long as this object lives.
///
/// Messages come from other processes and are untrusted: `arguments(limits:)` reads them
/// into values without ever holding more than its limits allow, however large or deep the
/// message is. Use it on the bus's loop thread only, like the bus.
public final class BusMessage {
    public enum Kind: Sendable, Hashable {
        case methodCall, methodReturn, error, signal
    }

    let handle: OpaquePointer

    /// Takes a new reference to `handle`.
    init(referencing handle: OpaquePointer) {
        self.handle = sd_bus_message_ref(handle)
    }

    /// Takes over the reference the caller holds.
    init(adopting handle: OpaquePointer) {
        self.handle = handle
    }

    deinit {
        sd_bus_message_unref(handle)
    }

    public var kind: Kind {
        var type: UInt8 = 0
        _ = sd_bus_message_get_type(handle, &type)
        switch Int(type) {
        case SD_BUS_MESSAGE_METHOD_CALL: return .methodCall
        case SD_BUS_MESSAGE_METHOD_RETURN: return .methodReturn
        case SD_BUS_MESSAGE_METHOD_ERROR: return .error
        default: return .signal
        }
    }

    public var sender: String? { sd_bus_message_get_sender(handle).map { String(cString: $0) } }
    public var destination: String? { sd_bus_message_get_destination(handle).map { String(cString: $0) } }
    public var path: String? { sd_bus_message_get_path(handle).map { String(cString: $0) } }
    public var interface: String? { sd_bus_message_get_interface(handle).map { String(cString: $0) } }
    public var member: String? { sd_bus_message_get_member(handle).map { String(cString: $0) } }
    /// The whole body's signature.
    public var signature: String { sd_bus_message_get_signature(handle, 1).map { String(cString: $0) } ?? "" }

    /// The message's serial number (its "cookie" in sd-bus).
    public var serial: UInt64 {
        var cookie: UInt64 = 0
        _ = sd_bus_message_get_cookie(handle, &cookie)
        return cookie
    }

    /// For a reply or an error, the serial of the call it answers.
    public var replySerial: UInt64? {
        var cookie: UInt64 = 0
        guard sd_bus_message_get_reply_cookie(handle, &cookie) >= 0 else { return nil }
        return cookie
    }

    /// The error an error reply carries.
    public var error: BusError? {
        guard let error = sd_bus_message_get_error(handle) else { return nil }
        return BusError(error)
    }

    public func isSignal(interface: String, member: String) -> Bool {
        sd_bus_message_is_signal(handle, interface, member) > 0
    }

    // MARK: Reading

    /// The body's values, read within `limits`: strings past the limit are cut (on a
    /// character boundary), containers past the depth limit and values past the count
    /// limit are skipped. Throws only when the message does not match its own signature.
    public func arguments(limits: DecodingLimits = .init()) throws(BusError) -> [BusValue] {
        _ = sd_bus_message_rewind(handle, 1)
        var reader = MessageReader(message: handle, limits: limits)
        return try reader.readAll(depth: 0)
    }

    // MARK: Writing

    /// Appends `values` to a message being built.
    func append(_ values: [BusValue]) throws(BusError) {
        for value in values { try append(value) }
    }

    private func append(_ value: BusValue) throws(BusError) {
        func check(_ result: Int32) throws(BusError) {
            if result < 0 { throw BusError(errno: result, doing: "appending a \(value.signature) to a message") }
        }
        func basic<T: BitwiseCopyable>(_ type: Character, _ value: T) throws(BusError) {
            try check(withUnsafeBytes(of: value) { sd_bus_message_append_basic(handle, CChar(type.asciiValue!), $0.baseAddress) })
        }
        func text(_ type: Character, _ string: String) throws(BusError) {
            try check(string.withCString { sd_bus_message_append_basic(handle, CChar(type.asciiValue!), $0) })
        }
        switch value {
        case .byte(let v): try basic("y", v)
        case .boolean(let v): try basic("b", Int32(v ? 1 : 0))
        case .int16(let v): try basic("n", v)
        case .uint16(let v): try basic("q", v)
        case .int32(let v): try basic("i", v)
        case .uint32(let v): try basic("u", v)
        case .int64(let v): try basic("x", v)
        case .uint64(let v): try basic("t", v)
        case .double(let v): try basic("d", v)
        case .string(let v): try text("s", v)
        case .objectPath(let v): try text("o", v)
        case .signature(let v): try text("g", v)
        case .unixFD: throw BusError(errno: EINVAL, doing: "appending a file descriptor")
        case .array(let element, let elements):
            try check(sd_bus_message_open_container(handle, CChar(UInt8(ascii: "a")), element))
            for element in elements { try append(element) }
            try check(sd_bus_message_close_container(handle))
        case .dictEntry(let key, let entryValue):
            let contents = key.signature + entryValue.signature
            try check(sd_bus_message_open_container(handle, CChar(UInt8(ascii: "e")), contents))
            try append(key)
            try append(entryValue)
            try check(sd_bus_message_close_container(handle))
        case .structure(let fields):
            let contents = fields.map(\.signature).joined()
            try check(sd_bus_message_open_container(handle, CChar(UInt8(ascii: "r")), contents))
            for field in fields { try append(field) }
            try check(sd_bus_message_close_container(handle))
        case .variant(let inner):
            try check(sd_bus_message_open_container(handle, CChar(UInt8(ascii: "v")), inner.signature))
            try append(inner)
            try check(sd_bus_message_close_container(handle))
        }
    }
}

/// How much of an untrusted message is read into values.
public struct DecodingLimits: Sendable, Hashable {
    /// Values read in all (every basic value and every container counts one); the rest of
    /// the message is skipped.
    public var maximumValues: Int
    /// Bytes of one string kept; the rest is cut at a character boundary.
    public var maximumStringBytes: Int
    /// Containers nested deeper than this are skipped whole.
    public var maximumDepth: Int

    public init(maximumValues: Int = 4096, maximumStringBytes: Int = 8192, maximumDepth: Int = 16) {
        self.maximumValues = maximumValues
        self.maximumStringBytes = maximumStringBytes
        self.maximumDepth = maximumDepth
    }
}

/// Reads a message's body, one value at a time, within limits.
private struct MessageReader {
    let message: OpaquePointer
    let limits: DecodingLimits
    var remaining: Int

    init(message: OpaquePointer, limits: DecodingLimits) {
        self.message = message
        self.limits = limits
        remaining = limits.maximumValues
    }

    private func fail(_ result: Int32, _ what: String) -> BusError {
        BusError(errno: result, doing: "reading \(what)")
    }

    /// Every value up to the end of the current container.
    mutating func readAll(depth: Int) throws(BusError) -> [BusValue] {
        var values: [BusValue] = []
        while let value = try next(depth: depth) {
            if let value { values.append(value) }
        }
        return values
    }

    /// The next value: nil at the end of the container, `.some(nil)` for one skipped.
    private mutating func next(depth: Int) throws(BusError) -> BusValue?? {
        var type: CChar = 0
        var contentsPointer: UnsafePointer<CChar>?
        let peeked = sd_bus_message_peek_type(message, &type, &contentsPointer)
        if peeked < 0 { throw fail(peeked, "a type") }
        if peeked == 0 { return nil }
        // Copied now: the next peek reuses the buffer.
        let contents = contentsPointer.map { String(cString: $0) }
        let code = UInt8(bitPattern: type)
        guard remaining > 0 else {
            try skip(code, contents)
            return .some(nil)
        }
        remaining -= 1
        switch code {
        case UInt8(ascii: "a"), UInt8(ascii: "e"), UInt8(ascii: "r"), UInt8(ascii: "v"):
            guard depth < limits.maximumDepth, let contents else {
                try skip(code, contents)
                return .some(nil)
            }
            let entered = sd_bus_message_enter_container(message, type, contents)
            if entered < 0 { throw fail(entered, "a container") }
            var children: [BusValue] = []
            while let child = try next(depth: depth + 1) {
                if let child { children.append(child) }
            }
            let exited = sd_bus_message_exit_container(message)
            if exited < 0 { throw fail(exited, "the end of a container") }
            switch code {
            case UInt8(ascii: "a"): return .array(elementSignature: contents, children)
            case UInt8(ascii: "v"):
                guard let inner = children.first else { return .some(nil) }
                return .variant(inner)
            case UInt8(ascii: "e"):
                guard children.count == 2 else { return .some(nil) }
                return .dictEntry(children[0], children[1])
            default: return .structure(children)
            }
        default:
            return try readBasic(code)
        }
    }

    private func skip(_ code: UInt8, _ contents: String?) throws(BusError) {
        // A container is skipped by its full signature; a basic value by its code.
        let signature: String
        switch code {
        case UInt8(ascii: "a"): signature = "a" + (contents ?? "")
        case UInt8(ascii: "e"): signature = "{" + (contents ?? "") + "}"
        case UInt8(ascii: "r"): signature = "(" + (contents ?? "") + ")"
        default: signature = String(UnicodeScalar(code))
        }
        let result = sd_bus_message_skip(message, signature)
        if result < 0 { throw fail(result, "past a \(signature)") }
    }

    private func readBasic(_ code: UInt8) throws(BusError) -> BusValue? {
        func read<T: BitwiseCopyable>(_ initial: T) throws(BusError) -> T {
            var value = initial
            let result = withUnsafeMutableBytes(of: &value) { sd_bus_message_read_basic(message, CChar(bitPattern: code), $0.baseAddress) }
            if result < 0 { throw fail(result, "a \(UnicodeScalar(code))") }
            return value
        }
        switch code {
        case UInt8(ascii: "y"): return .byte(try read(UInt8(0)))
        case UInt8(ascii: "b"): return .boolean(try read(Int32(0)) != 0)
        case UInt8(ascii: "n"): return .int16(try read(Int16(0)))
        case UInt8(ascii: "q"): return .uint16(try read(UInt16(0)))
        case UInt8(ascii: "i"): return .int32(try read(Int32(0)))
        case UInt8(ascii: "u"): return .uint32(try read(UInt32(0)))
        case UInt8(ascii: "x"): return .int64(try read(Int64(0)))
        case UInt8(ascii: "t"): return .uint64(try read(UInt64(0)))
        case UInt8(ascii: "d"): return .double(try read(Double(0)))
        case UInt8(ascii: "h"):
            try skip(code, nil)
            return .unixFD
        case UInt8(ascii: "s"), UInt8(ascii: "o"), UInt8(ascii: "g"):
            let pointer = try read(UnsafePointer<CChar>?.none)
            let text = pointer.map { Self.bounded($0, limit: limits.maximumStringBytes) } ?? ""
            switch code {
            case UInt8(ascii: "s"): return .string(text)
            case UInt8(ascii: "o"): return .objectPath(text)
            default: return .signature(text)
            }
        default:
            throw BusError(errno: EBADMSG, doing: "reading an unknown type '\(UnicodeScalar(code))'")
        }
    }

    /// The string at `pointer`, at most `limit` bytes of it, cut before a character that
    /// would not fit (sd-bus has checked it is valid UTF-8).
    static func bounded(_ pointer: UnsafePointer<CChar>, limit: Int) -> String {
        var length = strnlen(pointer, limit + 1)
        if length > limit {
            length = limit
            // Back off to the start of the character the cut falls in.
            pointer.withMemoryRebound(to: UInt8.self, capacity: limit + 1) { bytes in
                while length > 0, bytes[length] & 0xC0 == 0x80 { length -= 1 }
            }
        }
        return pointer.withMemoryRebound(to: UInt8.self, capacity: length) { bytes in
            String(decoding: UnsafeBufferPointer(start: bytes, count: length), as: UTF8.self)
        }
    }
}
