import Synchronization

/// A value one side replaces while any thread reads it: the app registry (replaced on reload,
/// read by every identity check) and the server (known only after the interfaces that report
/// its connection count exist).
final class SharedValue<Value: Sendable>: Sendable {
    private let stored: Mutex<Value>

    init(_ value: Value) { stored = Mutex(value) }

    var value: Value {
        get { stored.withLock { $0 } }
        set { stored.withLock { $0 = newValue } }
    }
}
