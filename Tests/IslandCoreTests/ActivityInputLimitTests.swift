import IslandCore
import OrderedJSON
import OrderedCollections
import Testing

/// The fixed bounds of docs/design.md §3 beyond size: nesting of attributes and state, and the
/// length of `type` and `key`. Each is tested at the limit and one past it, so neither an
/// off-by-one nor a missing check passes.
@Suite struct ActivityInputLimitTests: ActivityTesting {
    /// An object `depth` containers deep, alternating objects and arrays, with a scalar at the
    /// bottom: `{"a":[{"a":1}]}` is 3.
    static func nested(depth: Int) -> JSONObject {
        precondition(depth >= 1)
        var value: JSON = 1
        for level in stride(from: depth, through: 2, by: -1) {
            value = level.isMultiple(of: 2) ? .array([value]) : .object(["a": value])
        }
        return ["a": value]
    }

    @Test func theNestedFixtureHasTheDepthItSays() {
        for depth in [1, 2, 3, 32, 33, 61] {
            #expect(JSON.object(Self.nested(depth: depth)).nestingDepth == depth)
            #expect(JSON.nestingDepth(ofText: JSON.object(Self.nested(depth: depth)).serialized()) == depth)
        }
    }

    @Test(arguments: [ActivityLimits.maximumNesting, ActivityLimits.maximumNesting + 1, 61])
    func stateNestedToTheLimitIsAcceptedAndOnePastIsRefused(depth: Int) throws {
        var manager = makeManager()
        let deep = ActivityContent(state: Self.nested(depth: depth))
        let accepted = depth <= ActivityLimits.maximumNesting
        let error = IslandError.nestingTooDeep(limit: 32, depth: depth)
        if accepted {
            #expect(try manager.start(content: deep).content == deep)
        } else {
            #expect(throws: error) { try manager.start(content: deep) }
        }
        // The same state as an update and as the content of an end.
        let id = try manager.start().id
        // The state as text alone: the daemon's update path never builds a tree.
        let fromText = ActivityContent(canonicalText: JSON.object(Self.nested(depth: depth)).serialized())
        if accepted {
            #expect(try manager.update(app: pizza, id: id, content: fromText, entitlement: entitled, now: t0 + 1).activity.content == fromText)
            expectState(try manager.end(app: pizza, id: id, content: deep, now: t0 + 2).activity.state, .ended)
        } else {
            #expect(throws: error) { try manager.update(app: pizza, id: id, content: fromText, entitlement: entitled, now: t0 + 1) }
            #expect(throws: error) { try manager.end(app: pizza, id: id, content: deep, now: t0 + 2) }
            #expect(manager.activity(id: id)?.content == content(0))
        }
    }

    @Test(arguments: [ActivityLimits.maximumNesting, ActivityLimits.maximumNesting + 1])
    func attributesNestedToTheLimitAreAcceptedAndOnePastRefused(depth: Int) throws {
        var manager = makeManager()
        let request = { (manager: inout ActivityManager) throws(IslandError) in
            _ = try manager.request(
                app: pizza, type: "T", attributes: Self.nested(depth: depth), content: content(0),
                entitlement: entitled, now: t0)
        }
        if depth <= ActivityLimits.maximumNesting {
            try request(&manager)
            #expect(manager.list().count == 1)
        } else {
            #expect(throws: IslandError.nestingTooDeep(limit: 32, depth: depth)) { try request(&manager) }
            #expect(manager.list().isEmpty)
        }
    }

    /// A staleDate in milliseconds would keep the activity from ever going stale: refused by
    /// name on a start, an update and an end, as a timestamp in milliseconds is; the latest
    /// date in seconds, and Foundation's distantFuture, are accepted.
    @Test(arguments: [
        (ActivityLimits.latestDate, true), (32_503_680_000, true), (ActivityLimits.latestDate.nextUp, false),
        ((t0 + 60) * 1000, false),
    ])
    func aStaleDateInMillisecondsIsRefused(staleDate: Double, accepted: Bool) throws {
        var manager = makeManager()
        let dated = content(1, staleDate: staleDate)
        let error = IslandError.implausibleStaleDate(given: staleDate, latest: ActivityLimits.latestDate)
        let id = try manager.start().id
        if accepted {
            #expect(try manager.start(content: dated).content.staleDate == staleDate)
            expectState(try manager.update(app: pizza, id: id, content: dated, entitlement: entitled, now: t0 + 1).activity.state, .active)
        } else {
            #expect(throws: error) { try manager.start(content: dated) }
            #expect(throws: error) { try manager.update(app: pizza, id: id, content: dated, entitlement: entitled, now: t0 + 1) }
            #expect(throws: error) { try manager.end(app: pizza, id: id, content: dated, now: t0 + 2) }
            #expect(manager.activity(id: id)?.content == content(0))
        }
    }

    @Test func bracketsInsideStringsDoNotCount() throws {
        var manager = makeManager()
        let state: JSONObject = ["text": .string(String(repeating: "[{", count: 100)), "k\\\"[": "]"]
        #expect(JSON.nestingDepth(ofText: JSON.object(state).serialized()) == 1)
        #expect(try manager.start(content: ActivityContent(state: state)).content.state == state)
    }

    @Test(arguments: [(128, true), (129, false)])
    func typeUpToTheLimitInBytes(bytes: Int, accepted: Bool) throws {
        var manager = makeManager()
        // Two-byte characters: the limit counts UTF-8 bytes, not characters.
        let type = String(repeating: "é", count: bytes / 2) + (bytes.isMultiple(of: 2) ? "" : "x")
        #expect(type.utf8.count == bytes)
        let request = { (manager: inout ActivityManager) throws(IslandError) in
            _ = try manager.request(app: pizza, type: type, attributes: [:], content: content(0), entitlement: entitled, now: t0)
        }
        if accepted {
            try request(&manager)
            #expect(manager.list().map(\.type) == [type])
        } else {
            #expect(throws: IslandError.typeTooLong(limit: 128, size: bytes)) { try request(&manager) }
            #expect(manager.list().isEmpty)
        }
    }

    @Test(arguments: [(256, true), (257, false)])
    func keyUpToTheLimitInBytes(bytes: Int, accepted: Bool) throws {
        var manager = makeManager()
        let key = String(repeating: "k", count: bytes)
        if accepted {
            let first = try manager.start(key: key)
            #expect(try manager.start(key: key).id == first.id)
        } else {
            #expect(throws: IslandError.keyTooLong(limit: 256, size: bytes)) { try manager.start(key: key) }
            #expect(manager.list().isEmpty)
        }
    }

    /// A 60 KB alert was once accepted and sent to every presenter.
    @Test(arguments: [(1024, true), (1025, false), (60_000, false)])
    func alertUpToTheLimitInBytes(bytes: Int, accepted: Bool) throws {
        var manager = makeManager()
        let id = try manager.start().id
        // Title and body count together, in UTF-8 bytes.
        let title = String(repeating: "é", count: 100)
        let body = String(repeating: "b", count: bytes - 200)
        let alert = Alert(title: title, body: body)
        if accepted {
            let outcome = try manager.update(id, step: 1, alert: alert, at: t0 + 1)
            #expect(outcome.alerted)
        } else {
            #expect(throws: IslandError.alertTooLarge(limit: 1024, size: bytes)) {
                try manager.update(id, step: 1, alert: alert, at: t0 + 1)
            }
            #expect(manager.activity(id: id)?.content == content(0), "a refused update changes nothing")
        }
    }

    @Test func theErrorsAreNamedWithTheirLimits() {
        #expect(IslandError.nestingTooDeep(limit: 32, depth: 33).name == "org.island.NestingTooDeep")
        #expect(IslandError.nestingTooDeep(limit: 32, depth: 33).parameters == ["limit": 32, "depth": 33])
        #expect(IslandError.typeTooLong(limit: 128, size: 200).name == "org.island.TypeTooLong")
        #expect(IslandError.typeTooLong(limit: 128, size: 200).parameters == ["limit": 128, "size": 200])
        #expect(IslandError.keyTooLong(limit: 256, size: 300).name == "org.island.KeyTooLong")
        #expect(IslandError.keyTooLong(limit: 256, size: 300).parameters == ["limit": 256, "size": 300])
        #expect(IslandError.alertTooLarge(limit: 1024, size: 60_000).name == "org.island.AlertTooLarge")
        #expect(IslandError.alertTooLarge(limit: 1024, size: 60_000).parameters == ["limit": 1024, "size": 60_000])
    }

    /// What a daemon before these limits stored: each is refused when read back (the daemon
    /// skips it with a warning) instead of reaching every presenter's stream.
    @Test(arguments: ["state", "deliveredState", "attributes", "type", "key"])
    func aStoredActivityBreakingALimitIsNotRestored(member: String) throws {
        var manager = makeManager()
        let stored = try manager.start(key: "k")
        var json = stored.json
        #expect(try Activity(json: json).id == stored.id)
        let deep = JSON.object(Self.nested(depth: 61))
        switch member {
        case "state": json["content"] = ["state": deep, "relevanceScore": 0.0]
        case "deliveredState": json["deliveredContent"] = ["state": deep, "relevanceScore": 0.0]
        case "attributes": json["attributes"] = deep
        case "type": json["type"] = .string(String(repeating: "t", count: 200_000))
        default: json["key"] = .string(String(repeating: "k", count: 257))
        }
        #expect(throws: ActivityDecodingError.self) { try Activity(json: json) }
    }
}
