import DequeModule
import VarlinkCore

/// The bounds of the daemon's streams (bounded by construction: docs/design.md §4): per
/// stream, and for all streams of a kind together, so that the memory slow peers can make the
/// daemon hold does not grow with the number of connections they open.
enum StreamBounds {
    /// A watcher's queue holds one event per activity (plus taps, presses and ends), a few
    /// KiB each: this is far more than an app within its limits makes a reading watcher wait for.
    static let watchBytes = 512 * 1024
    static let watchEvents = 1024
    /// All watchers' queues together.
    static let allWatchBytes = 32 * 1024 * 1024
    /// A presenter's queued deltas, before they collapse into a resync.
    static let presenterBytes = 1024 * 1024
    static let presenterMessages = 64
    /// All presenters' queued deltas together (deltas are shared between presenters: this
    /// counts them once per presenter, more than they hold).
    static let allPresenterBytes = 32 * 1024 * 1024

    /// Latest wins per activity; what cannot be merged counts against the bounds, and a
    /// watcher over them is cut off (`OutputQueueFull`) to start afresh with a new Watch.
    static var watch: OutboundStream<WatchEvent>.Policy {
        .init(
            capacity: watchEvents, byteLimit: watchBytes, size: \.size,
            enqueue: { queue, event in
                if let key = event.key, queue.contains(where: { $0.supersedable && $0.key == key }) {
                    queue.removeAll { $0.supersedable && $0.key == key }
                }
                queue.append(event)
            },
            overflow: { _ in false })
    }

    /// Over a bound, everything queued collapses into one resync snapshot, built when sent.
    static var presenter: OutboundStream<PresenterMessage>.Policy {
        .init(
            capacity: presenterMessages, byteLimit: presenterBytes,
            size: { message in
                if case .delta(let encoded, _) = message { return encoded.bytes.count }
                return 0
            },
            overflow: { queue in
                queue.removeAll()
                queue.append(.snapshot(resync: true))
                return true
            })
    }
}
