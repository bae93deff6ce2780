import IslandBridge
import OrderedCollections
import OrderedJSON
import Logging
import SDBus
import Testing

/// What a source under test handed the bridge: its changes, in order.
final class SourceHarness {
    let bus = FakeBus()
    private(set) var changes: [SourceChange] = []
    private(set) var readsEnded = 0
    /// The test's clock.
    var now = 1000.0
    var installed: [String: DesktopEntry] = [
        "org.example.Player": DesktopEntry(name: "Example Player", icon: "example-player"),
        "org.example.Files": DesktopEntry(name: "Example Files", icon: "example-files"),
    ]

    /// The source under test, held as the bridge holds it: its subscriptions go with it.
    var subject: AnyObject?

    static let busID = "b0b0b0b0b0b0"
    static let logger = Logger(label: "test") { _ in SwiftLogNoOpLogHandler() }

    lazy var context = SourceContext(
        busID: Self.busID, changes: { [unowned self] in changes += $0 }, readEnded: { [unowned self] in readsEnded += 1 },
        lookup: { [unowned self] in installed[$0] }, now: { [unowned self] in now }, logger: Self.logger)
    lazy var senders = SenderIdentities(bus: bus, logger: Self.logger)

    /// The changes since the last call.
    func take() -> [SourceChange] {
        defer { changes = [] }
        return changes
    }

    /// The activities shown since the last call, the others dropped.
    func shown() -> [BridgedActivity] {
        take().compactMap { change in
            if case .show(let activity) = change { return activity }
            return nil
        }
    }
}

extension BridgedActivity {
    var app: String? { attributes["app"]?["name"]?.stringValue }
}

/// Expects a member of an activity's state to be `expected` (nil: absent). One typed `#expect`
/// for the suites' many: each `#expect(content.state["percent"] == 40)` costs the test build
/// 10-60 ms more of type-checking (the literal's JSON type inferred through the macro's
/// expansion) than a call of this; a failure still shows both values at the caller's line.
func expectJSON(_ value: JSON?, _ expected: JSON?, _ comment: Comment? = nil, sourceLocation: SourceLocation = #_sourceLocation) {
    #expect(value == expected, comment, sourceLocation: sourceLocation)
}

/// What a follower of an on/off state (the lock, Do Not Disturb) reported, in order: `nil` for
/// "not known", as its callback gives it.
final class Readings {
    var values: [Bool?] = []

    /// Expects the readings so far to be `expected`, in order. One typed `#expect` for the
    /// suites' many: each `#expect(readings.values == [nil, true])` costs the test build
    /// 10-60 ms more of type-checking than a call of this; a failure still shows both lists.
    func expectValues(_ expected: [Bool?], _ comment: Comment? = nil, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(values == expected, comment, sourceLocation: sourceLocation)
    }
}
