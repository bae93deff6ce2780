import IslandKit
import IslandProtocol
import Testing
import VarlinkCore

/// IslandKit reads an interface's enum values through its own enums' raw values: every value
/// Protocol/org.island.Producer.varlink declares reads as one of their cases, so a value renamed
/// or added there is found here rather than by a reply or event IslandKit cannot read.
@Suite struct WireEnumTests {
    /// The values of `member` of the producer interface's struct type `owner`, through `?`.
    static func values(_ owner: String, _ member: String) throws -> [String] {
        let interface = try VarlinkInterface(parsing: IslandInterfaces.producer)
        guard case .struct(let fields)? = interface.types[owner], var type = fields.first(where: { $0.name == member })?.type else {
            Issue.record("org.island.Producer.\(owner) has no member \(member)")
            return []
        }
        if case .nullable(let inner) = type { type = inner }
        guard case .enum(let values) = type else {
            Issue.record("org.island.Producer.\(owner).\(member) is no enum")
            return []
        }
        return values
    }

    @Test func everyValueOfAnActivityReads() throws {
        let states = try Self.values("Activity", "state")
        #expect(Set(states) == Set(ActivityState.allCases.map(\.rawValue)))
        for reason in try Self.values("Activity", "endReason") {
            #expect(ActivityEndReason(rawValue: reason) != nil, "endReason \(reason)")
        }
        for policy in try Self.values("Activity", "ownerGone") {
            #expect(ActivityOwnerGonePolicy(rawValue: policy) != nil, "ownerGone \(policy)")
        }
        for reason in try Self.values("Delivery", "alertSuppressedReason") {
            #expect(AlertSuppressionReason(rawValue: reason) != nil, "alertSuppressedReason \(reason)")
        }
    }

    @Test func everyKindOfEventAnAppIsSentReads() throws {
        // `watching` says the stream is open; it is no event of the app's.
        for kind in try Self.values("Event", "kind") where kind != ProducerNames.Event.Kind.watching {
            #expect(ActivityEvent.Kind(rawValue: kind) != nil, "event kind \(kind)")
        }
    }
}
