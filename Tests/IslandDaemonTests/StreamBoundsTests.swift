import DequeModule
import IslandCore
import OrderedJSON
import OrderedCollections
import Synchronization
import Testing
import VarlinkCore
@testable import IslandDaemon

/// What a watcher that does not keep up is left with: the latest event of each activity, and
/// every event the app must act on, within bounds shared by all watchers.
struct StreamBoundsTests {
    static let app = "org.example.Coffee"

    /// Two activities of one app: their snapshots as they change.
    func activities() throws -> (a: [Activity], b: Activity) {
        let ids = Mutex(0)
        var manager = ActivityManager(makeID: { "id-\(ids.withLock { $0 += 1; return $0 })" })
        let entitled = AppAuthorization(entitled: true)
        let a = try manager.request(
            app: Self.app, type: "T", attributes: [:], content: ActivityContent(state: ["n": 0]),
            entitlement: entitled, now: 1000
        ).activity
        let b = try manager.request(
            app: Self.app, type: "T", attributes: [:], content: ActivityContent(state: ["n": 0]),
            entitlement: entitled, now: 1000
        ).activity
        let a1 = try manager.update(
            app: Self.app, id: a.id, content: ActivityContent(state: ["n": 1]),
            entitlement: entitled, now: 1001
        ).activity
        let ended = try manager.end(app: Self.app, id: a.id, now: 1002).activity
        return ([a, a1, ended], b)
    }

    func kinds(_ queue: Deque<WatchEvent>) -> [String] {
        queue.map { event in
            let parsed = try? JSONParser.parse(event.encoded.bytes)
            let object = parsed?["event"]
            let n = object?["activity"]?["content"]?["state"]?["n"]?.intValue.map { ":\($0)" } ?? ""
            let state = object?["activity"]?["state"]?.stringValue.map { ":\($0)" } ?? ""
            return (object?["kind"]?.stringValue ?? "?") + n + state
        }
    }

    @Test func aLaterEventOfAnActivityReplacesItsEarlierOneButNotAnEndOrAPress() throws {
        let (a, b) = try activities()
        let policy = StreamBounds.watch
        var queue = Deque<WatchEvent>()
        policy.enqueue(&queue, WatchEvent(["kind": "watching"]))
        policy.enqueue(&queue, WatchEvent(kind: .content, activity: a[0]))
        policy.enqueue(&queue, WatchEvent(kind: .content, activity: b))
        policy.enqueue(&queue, WatchEvent(kind: .button, activity: a[0], members: ["action": "go"]))
        policy.enqueue(&queue, WatchEvent(kind: .content, activity: a[1]))
        #expect(kinds(queue) == ["watching", "content:0:active", "button:0:active", "content:1:active"])
        // The end is kept; the content before it goes, and nothing later replaces the end.
        policy.enqueue(&queue, WatchEvent(kind: .state, activity: a[2]))
        policy.enqueue(&queue, WatchEvent(kind: .content, activity: a[2]))
        #expect(kinds(queue) == ["watching", "content:0:active", "button:0:active", "state:1:ended", "content:1:ended"])
        // Authorization events replace each other too.
        policy.enqueue(&queue, WatchEvent(["kind": "authorization", "authorization": ["enabled": true]], key: "authorization"))
        policy.enqueue(&queue, WatchEvent(["kind": "authorization", "authorization": ["enabled": false]], key: "authorization"))
        #expect(kinds(queue).filter { $0 == "authorization" }.count == 1)
        #expect(policy.overflow(&queue) == false)
    }

    @Test func theBudgetIsSharedAndGivenBack() {
        let budget = QueueBudget(limit: 100)
        #expect(budget.resize(from: 0, to: 60))
        #expect(!budget.resize(from: 0, to: 50))
        #expect(budget.resize(from: 0, to: 40))
        #expect(budget.inUse == 100)
        #expect(budget.resize(from: 60, to: 10))
        #expect(budget.inUse == 50)
        budget.release(50)
        #expect(budget.inUse == 0)
    }
}
