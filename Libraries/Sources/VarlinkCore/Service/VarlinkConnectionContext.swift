import Synchronization

/// Per-connection facts and state shared by all calls on one connection, such as the
/// role a connection bound itself to with its first call.
public final class VarlinkConnectionContext: Sendable {
    public let id: UInt64
    public let peer: PeerCredentials?
    /// Each value boxed under its type's identifier, so that reading it back is a plain
    /// downcast rather than a dynamic cast from an existential (a role is read on every call).
    /// A list searched in order, not a table: its keys are types the service's own code
    /// attaches, a handful at most, and comparing them costs less than hashing one.
    private let attachments = Mutex<Attachments>(Attachments())

    private struct Attachments {
        private var entries: [(key: ObjectIdentifier, value: any AnyObject & Sendable)] = []

        subscript(key: ObjectIdentifier) -> (any AnyObject & Sendable)? {
            get {
                for entry in entries where entry.key == key { return entry.value }
                return nil
            }
            set {
                let found = entries.firstIndex { $0.key == key }
                switch (found, newValue) {
                case (let index?, let value?): entries[index].value = value
                case (let index?, nil): entries.remove(at: index)
                case (nil, let value?): entries.append((key, value))
                case (nil, nil): break
                }
            }
        }
    }

    @usableFromInline final class Attachment<Value: Sendable>: Sendable {
        @usableFromInline let value: Value
        @usableFromInline init(_ value: Value) { self.value = value }
    }

    /// What is stored under `T`'s identifier is always an `Attachment<T>`.
    @inlinable static func value<T: Sendable>(_ stored: (any AnyObject & Sendable)?, as type: T.Type) -> T? {
        guard let stored else { return nil }
        return unsafeDowncast(stored, to: Attachment<T>.self).value
    }

    /// The box stored under `key`, looked up under the lock: the part of `attachment(_:)`
    /// that is the same for every type.
    @usableFromInline func stored(under key: ObjectIdentifier) -> (any AnyObject & Sendable)? {
        attachments.withLock { $0[key] }
    }
    /// Callbacks to run when the connection closes; nil once it has closed.
    private let closeHandlers = Mutex<[@Sendable () -> Void]?>([])

    public init(id: UInt64, peer: PeerCredentials?) {
        self.id = id
        self.peer = peer
    }

    /// The value stored for `type` on this connection.
    ///
    /// Inlinable, so that the unboxing is specialized for `T` in the module that asks (a
    /// role is read on every call): unspecialized, it looked up `Optional<T>`'s metadata in
    /// the runtime's cache on every call, 4% of the event loop's instructions per update
    /// (Benchmarks/profile.py).
    @inlinable
    public func attachment<T: Sendable>(_ type: T.Type) -> T? {
        Self.value(stored(under: ObjectIdentifier(type)), as: type)
    }

    /// Stores `value` unless a value of its type is already there; returns the value in
    /// place afterwards. Lets concurrent calls agree on one binding.
    @discardableResult
    public func attachIfAbsent<T: Sendable>(_ value: T) -> T {
        attachments.withLock { storage in
            if let existing = Self.value(storage[ObjectIdentifier(T.self)], as: T.self) { return existing }
            storage[ObjectIdentifier(T.self)] = Attachment(value)
            return value
        }
    }

    public func setAttachment<T: Sendable>(_ value: T?) {
        attachments.withLock { $0[ObjectIdentifier(T.self)] = value.map { Attachment($0) } }
    }

    /// Runs `callback` once when the connection closes (at once if it already has), so
    /// per-connection state elsewhere (a producer count, a subscription) can be released.
    public func onClose(_ callback: @escaping @Sendable () -> Void) {
        let closed = closeHandlers.withLock { handlers -> Bool in
            guard handlers != nil else { return true }
            handlers!.append(callback)
            return false
        }
        if closed { callback() }
    }

    /// Called by the transport when the connection is gone.
    public func markClosed() {
        let handlers = closeHandlers.withLock { handlers in
            defer { handlers = nil }
            return handlers ?? []
        }
        for handler in handlers { handler() }
    }
}
