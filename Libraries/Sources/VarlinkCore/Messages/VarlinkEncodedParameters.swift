public import OrderedJSON
import Synchronization

/// Reply parameters already serialized: a stream that sends the same update to many peers
/// encodes it once. A small one is copied into each peer's output with the replies around
/// it; a large one (`sharedSizeThreshold`) is written to every peer's socket from one buffer
/// (`shared(as:)`) — with many presenters, one copy of a large update in memory instead of
/// one each.
public struct VarlinkEncodedParameters: Sendable {
    /// One reference either way, so that copying parameters (once per peer they go to) costs
    /// one retain.
    private enum Storage: Sendable {
        case small([UInt8])
        case shared(SharedBytes)
    }

    private let storage: Storage

    public init(_ parameters: JSONObject) {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(256)
        JSON.writeObject(parameters, to: &bytes)
        self.init(bytes: bytes)
    }

    /// Parameters written as text; `text` must hold one JSON object.
    public init(_ text: borrowing JSONText) {
        self.init(bytes: text.bytes)
    }

    private init(bytes: [UInt8]) {
        storage = bytes.count >= Self.sharedSizeThreshold ? .shared(SharedBytes(bytes)) : .small(bytes)
    }

    /// The bytes of one JSON object.
    public var bytes: [UInt8] {
        switch storage {
        case .small(let bytes): bytes
        case .shared(let shared): shared.bytes
        }
    }

    /// Replies this large go out from one buffer shared by every connection, between a head
    /// and a tail, rather than copied into each connection's output: a snapshot of many
    /// activities for many presenters stays one copy in memory.
    package static let sharedSizeThreshold = 4096

    /// Whether these parameters are large enough to be written from a shared buffer.
    package var isShared: Bool {
        if case .shared = storage { true } else { false }
    }

    /// The bytes in the form a transport writes (NIO's `ByteBuffer`), made by `make` the first
    /// time any connection asks and the same for every connection after: a transport cannot
    /// write an array without copying it, and one copy per connection is what sharing avoids.
    package func shared<Form: Sendable>(as make: ([UInt8]) -> Form) -> Form {
        switch storage {
        case .small(let bytes):
            return make(bytes)
        case .shared(let shared):
            return shared.made.withLock { made in
                if let form = made as? Form { return form }
                let form = make(shared.bytes)
                made = form
                return form
            }
        }
    }
}

/// Large parameters, and the transport's form of them once made.
private final class SharedBytes: Sendable {
    let bytes: [UInt8]
    let made = Mutex<(any Sendable)?>(nil)

    init(_ bytes: [UInt8]) {
        self.bytes = bytes
    }
}
