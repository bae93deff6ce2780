import DequeModule
import IslandCore
import IslandJSON
import VarlinkCore

/// One event of a Watch stream, encoded once for every watcher it goes to.
struct WatchEvent: Sendable {
    let encoded: VarlinkEncodedParameters
    /// What a later event supersedes this one by: the activity a state or content event
    /// carries (the later event carries it whole, newer), or the app's authorization.
    let key: String?
    /// Whether a later event with the same key replaces this one. Taps and button presses are
    /// facts the app acts on, and an end is the last word on an activity: those are kept.
    let supersedable: Bool

    var size: Int { encoded.bytes.count }

    /// `{"event": {"kind": …, "activity": …, members…}}`.
    init(kind: String, activity: Activity, members: KeyValuePairs<StaticString, JSON> = [:]) {
        var text = JSONText(capacity: 1024)
        text.openObject()
        text.key("event")
        text.openObject()
        text.member("kind", string: kind)
        text.key("activity")
        Wire.writeActivity(activity, to: &text)
        for (key, value) in members { text.member(key, value) }
        text.closeObject()
        text.closeObject()
        encoded = VarlinkEncodedParameters(text)
        key = activity.id
        let terminal = activity.state == .ended || activity.state == .dismissed
        supersedable = (kind == "state" || kind == "content") && !(kind == "state" && terminal)
    }

    init(_ event: JSONObject, key: String? = nil) {
        encoded = VarlinkEncodedParameters(["event": .object(event)])
        self.key = key
        supersedable = key != nil
    }
}

/// The bounds of the daemon's streams (DESIGN.md §4, Resources per client): per stream, and
/// for all streams of a kind together, so that the memory slow peers can make the daemon
/// hold does not grow with the number of connections they open.
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
        .init(capacity: watchEvents, byteLimit: watchBytes, size: \.size,
              enqueue: { queue, event in
                  if let key = event.key, queue.contains(where: { $0.supersedable && $0.key == key }) {
                      queue.removeAll { $0.supersedable && $0.key == key }
                  }
                  queue.append(event)
              },
              overflow: { _ in false })
    }

    /// Over a bound, everything queued collapses into one resync snapshot, built when sent.
    static var presenter: OutboundStream<IslandEngine.PresenterMessage>.Policy {
        .init(capacity: presenterMessages, byteLimit: presenterBytes,
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
