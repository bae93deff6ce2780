import IslandCore
import OrderedJSON
import IslandProtocol
import OrderedCollections
import Synchronization
import VarlinkCore
@testable import IslandDaemon

/// Where the replies of one streaming call go in these tests: kept, to be read back, with
/// the peer's reading (`isWritable`) and going away (`cancel`) under the test's control.
final class RecordingSink: VarlinkReplySink {
    private struct State {
        var replies: [VarlinkReply] = []
        var cancellation: [@Sendable () -> Void] = []
        var writable = true
        var cancelled = false
    }

    private let state = Mutex(State())

    func send(_ reply: VarlinkReply, final: Bool) {
        state.withLock { $0.replies.append(reply) }
    }

    func onCancel(_ callback: @escaping @Sendable () -> Void) {
        let cancelled = state.withLock { state in
            if !state.cancelled { state.cancellation.append(callback) }
            return state.cancelled
        }
        if cancelled { callback() }
    }

    var isWritable: Bool {
        get { state.withLock { $0.writable } }
        set { state.withLock { $0.writable = newValue } }
    }

    /// The peer goes away before the call ends.
    func cancel() {
        let callbacks = state.withLock { state in
            state.cancelled = true
            defer { state.cancellation = [] }
            return state.cancellation
        }
        for callback in callbacks { callback() }
    }

    /// Every reply so far, as trees.
    var replies: [JSONObject] { state.withLock { $0.replies }.map(\.parameters) }

    /// The errors the call ended with, by name.
    var errors: [String] { state.withLock { $0.replies }.compactMap(\.error) }
}

/// A responder for a streaming call of the daemon's interfaces, answering into a
/// `RecordingSink`. Made by dispatching the call to a service that only hands it out, so
/// that every reply is checked against the method's declared output type (in debug builds)
/// as the daemon's would be.
func streamingResponder(_ method: String, interface: String, parameters: JSONObject = [:]) -> (VarlinkResponder, RecordingSink) {
    let captured = Mutex<VarlinkResponder?>(nil)
    let parsed = try! VarlinkInterface(parsing: interface)
    let name = String(method.split(separator: ".").last!)
    let service = VarlinkService(
        info: VarlinkServiceInfo(vendor: "test", product: "test", version: "0", url: "test"),
        implementations: [
            VarlinkImplementation(
                interface: parsed,
                handlers: [
                    name: .streaming { _, responder in captured.withLock { $0 = responder } }
                ])
        ], connectionErrors: .island)
    let sink = RecordingSink()
    service.dispatch(
        VarlinkCall(method: method, parameters: parameters, more: true),
        connection: VarlinkConnectionContext(id: 1, peer: nil), sink: sink)
    return (captured.withLock { $0 }!, sink)
}

func presenterResponder() -> (VarlinkResponder, RecordingSink) {
    streamingResponder("org.island.Presenter.Subscribe", interface: IslandInterfaces.presenter)
}

func watchResponder() -> (VarlinkResponder, RecordingSink) {
    streamingResponder("org.island.Producer.Watch", interface: IslandInterfaces.producer)
}

extension IslandEngine {
    /// A snapshot of `uid`'s island as a tree, to look into.
    func snapshotUpdate(uid: UInt32, resync: Bool) -> JSONObject {
        let (encoded, _) = encodedSnapshot(uid: uid, resync: resync)
        return (try? JSONParser.parse(encoded.bytes))?["update"]?.objectValue ?? [:]
    }
}

/// Activities made by the real rules, with ids `a1`, `a2`, … in order.
struct ActivityMaker {
    static let t0: Double = 1_700_000_000
    var manager: ActivityManager

    init() {
        let ids = Atomic<Int>(0)
        manager = ActivityManager(makeID: { "a\(ids.add(1, ordering: .relaxed).newValue)" })
    }

    mutating func start(
        app: String = "org.example.Coffee", uid: UInt32? = nil, state: JSONObject = ["n": 0],
        staleDate: Double? = nil, at now: Double = t0
    ) throws -> (Activity, [ActivityEvent]) {
        let outcome = try manager.request(
            app: app, uid: uid, type: "T", attributes: [:],
            content: ActivityContent(state: state, staleDate: staleDate),
            entitlement: AppAuthorization(entitled: true), now: now)
        return (outcome.activity, outcome.events)
    }

    mutating func update(
        _ activity: Activity, state: JSONObject, alert: Alert? = nil,
        at now: Double
    ) throws -> (Activity, [ActivityEvent]) {
        let outcome = try manager.update(
            app: activity.app, uid: activity.uid, id: activity.id,
            content: ActivityContent(state: state), alert: alert,
            entitlement: AppAuthorization(entitled: true), now: now)
        return (outcome.activity, outcome.events)
    }

    mutating func end(_ activity: Activity, dismissal: DismissalPolicy = .default, at now: Double) throws -> (Activity, [ActivityEvent]) {
        let outcome = try manager.end(app: activity.app, uid: activity.uid, id: activity.id, dismissalPolicy: dismissal, now: now)
        return (outcome.activity, outcome.events)
    }
}
