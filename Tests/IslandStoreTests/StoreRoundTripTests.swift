import Foundation
import OrderedJSON
import OrderedCollections
import Testing

@testable import IslandStore

@Suite struct StoreRoundTripTests {
    let activityBody: JSONObject = [
        "id": "a1", "type": "Delivery", "attributes": ["order": 42],
        "content": ["state": ["eta": 12.5, "steps": [1, 2, nil, true]], "relevanceScore": 0],
    ]

    @Test func everyMutationKindRoundTrips() throws {
        let directory = TemporaryDirectory()
        let store = try IslandStore.open(directory: directory.path)
        let writer = StoreWriter(store: store)
        defer { writer.close() }

        try writer.commitNow([
            .putActivity(id: "a1", app: "org.example.App", state: "active", body: StoredDocument(activityBody)),
            .putActivity(id: "a2", app: "org.example.Other", state: "ended", body: ["n": 1]),
            .putSetting(key: "user.muted", value: ["apps": ["org.example.Other"]]),
            .putSetting(key: "budget.org.example.App", value: ["starts": [1.5, 2.5]]),
            .putLayout(app: "org.example.App", type: "Delivery", body: "{{eta}} min"),
            .putLayout(app: "org.example.App", type: "Timer", body: "{{left}}"),
        ])
        var state = try store.load()
        #expect(state.activities.map(\.id) == ["a1", "a2"])
        #expect(state.activities[0].app == "org.example.App")
        #expect(state.activities[0].state == "active")
        #expect(state.activities[0].body == activityBody)
        #expect(state.activities[0].updatedAt != nil)
        #expect(state.settings == ["user.muted": ["apps": ["org.example.Other"]], "budget.org.example.App": ["starts": [1.5, 2.5]]])
        #expect(
            state.layouts == [
                StoredLayout(app: "org.example.App", type: "Delivery", body: "{{eta}} min"),
                StoredLayout(app: "org.example.App", type: "Timer", body: "{{left}}"),
            ])
        #expect(state.damaged.isEmpty)

        try writer.commitNow([
            .deleteActivity(id: "a1"),
            .putActivity(id: "a2", app: "org.example.Other", state: "dismissed", body: ["n": 2]),
            .deleteSetting(key: "user.muted"),
            .deleteLayout(app: "org.example.App", type: "Timer"),
        ])
        state = try store.load()
        #expect(state.activities.map(\.id) == ["a2"])
        #expect(state.activities[0].state == "dismissed")
        #expect(state.activities[0].body == ["n": 2])
        #expect(state.settings == ["budget.org.example.App": ["starts": [1.5, 2.5]]])
        #expect(state.layouts == [StoredLayout(app: "org.example.App", type: "Delivery", body: "{{eta}} min")])
    }

    @Test func reopeningShowsTheSameState() async throws {
        let directory = TemporaryDirectory()
        let before: StoredState
        do {
            let store = try IslandStore.open(directory: directory.path)
            let writer = StoreWriter(store: store)
            try await writer.commit([
                .putActivity(id: "a1", app: "org.example.App", state: "active", body: StoredDocument(activityBody)),
                .putSetting(key: "k", value: "v"),
                .putLayout(app: "org.example.App", type: "T", body: "b"),
            ])
            try await writer.commit([.putActivity(id: "a0", app: "org.example.App", state: "stale", body: [:])])
            writer.close()
            before = try store.load()
            try store.close()
        }
        let reopened = try IslandStore.open(directory: directory.path)
        let after = try reopened.load()
        #expect(after == before)
        #expect(after.activities.map(\.id) == ["a1", "a0"])
    }

    @Test func laterMutationsOfARowWinWithinAndAcrossBatches() async throws {
        let directory = TemporaryDirectory()
        let store = try IslandStore.open(directory: directory.path)
        let writer = StoreWriter(store: store)
        defer { writer.close() }

        try await writer.commit([
            .putActivity(id: "a", app: "x.y", state: "active", body: ["v": 1]),
            .deleteActivity(id: "a"),
            .putActivity(id: "b", app: "x.y", state: "active", body: ["v": 1]),
            .putActivity(id: "b", app: "x.y", state: "stale", body: ["v": 2]),
        ])
        for v in 3...20 {
            try await writer.commit([.putActivity(id: "b", app: "x.y", state: "active", body: ["v": .int(v)])])
        }
        let state = try store.load()
        #expect(state.activities.map(\.id) == ["b"])
        #expect(state.activities[0].body == ["v": 20])
    }

    /// A row is updated where it is and inserted only when missing: a rewrite of an earlier
    /// activity keeps its place in the first-stored order (its rowid), a rewrite of a setting
    /// replaces its value, and a row deleted and written again in a later commit is inserted
    /// anew, last.
    @Test func rewrittenRowsKeepTheirPlaceAndDeletedOnesComeBackLast() throws {
        let directory = TemporaryDirectory()
        let store = try IslandStore.open(directory: directory.path)
        let writer = StoreWriter(store: store)
        defer { writer.close() }
        try writer.commitNow([
            .putActivity(id: "a", app: "x.y", state: "active", body: ["v": 1]),
            .putActivity(id: "b", app: "x.y", state: "active", body: ["v": 1]),
            .putActivity(id: "c", app: "x.y", state: "active", body: ["v": 1]),
            .putSetting(key: "k", value: 1),
        ])
        try writer.commitNow([.putActivity(id: "a", app: "x.z", state: "stale", body: ["v": 2]), .putSetting(key: "k", value: 2)])
        try writer.commitNow([.deleteActivity(id: "b")])
        try writer.commitNow([.putActivity(id: "b", app: "x.y", state: "active", body: ["v": 3]), .putSetting(key: "l", value: 3)])
        let state = try store.load()
        #expect(state.activities.map(\.id) == ["a", "c", "b"])
        #expect(state.activities.map(\.app) == ["x.z", "x.y", "x.y"])
        #expect(state.activities.map(\.state) == ["stale", "active", "active"])
        #expect(state.activities.map(\.body) == [["v": 2], ["v": 1], ["v": 3]])
        #expect(state.settings == ["k": 2, "l": 3])
    }

    /// One batch of distinct rows, a commit's usual case, is its own reduction; a row written
    /// twice in it, under any pair of kinds, is reduced to the later write.
    @Test func aLoneBatchIsKeptAsItIsUnlessItWritesARowTwice() {
        let distinct: [StoreMutation] = [
            .putActivity(id: "a", app: "x", state: "active", body: [:]), .putSetting(key: "a", value: 1),
            .putLayout(app: "a", type: "t", body: "1"), .putPushToken(StoredPushToken(token: "a", app: "x", activityID: "a")),
            .deleteActivity(id: "b"), .deleteSetting(key: "b"), .deleteLayout(app: "a", uid: 7, type: "t"), .deletePushToken(token: "b"),
        ]
        #expect(StoreMutation.reduced([distinct]) == distinct)
        let rewrites: [(StoreMutation, StoreMutation)] = [
            (.putActivity(id: "a", app: "x", state: "active", body: [:]), .deleteActivity(id: "a")),
            (.deleteActivity(id: "a"), .putActivity(id: "a", app: "x", state: "ended", body: [:])),
            (.putSetting(key: "k", value: 1), .putSetting(key: "k", value: 2)),
            (.putSetting(key: "k", value: 1), .deleteSetting(key: "k")),
            (.deleteSetting(key: "k"), .putSetting(key: "k", value: 2)),
            (.putLayout(app: "a", uid: 7, type: "t", body: "1"), .deleteLayout(app: "a", uid: 7, type: "t")),
            (.putPushToken(StoredPushToken(token: "t", app: "x", type: "T")), .deletePushToken(token: "t")),
            (.deletePushToken(token: "t"), .putPushToken(StoredPushToken(token: "t", app: "x", type: "T", lastTimestamp: 2))),
        ]
        for (first, second) in rewrites {
            #expect(first.writesSameRow(as: second) && second.writesSameRow(as: first))
            #expect(StoreMutation.reduced([[first, .putSetting(key: "other", value: 0), second]]) == [second, .putSetting(key: "other", value: 0)])
        }
        #expect(!StoreMutation.putActivity(id: "k", app: "x", state: "active", body: [:]).writesSameRow(as: .putSetting(key: "k", value: 1)))
        #expect(!StoreMutation.putLayout(app: "a", uid: 7, type: "t", body: "1").writesSameRow(as: .deleteLayout(app: "a", type: "t")))
    }

    @Test func reductionKeepsTheLastMutationPerRowInFirstSeenOrder() {
        let reduced = StoreMutation.reduced([
            [.putSetting(key: "a", value: 1), .putLayout(app: "x", type: "t", body: "1")],
            [.deleteSetting(key: "a"), .deleteActivity(id: "a")],
            [.putSetting(key: "a", value: 2)],
        ])
        #expect(reduced == [.putSetting(key: "a", value: 2), .putLayout(app: "x", type: "t", body: "1"), .deleteActivity(id: "a")])
    }

    @Test(arguments: [1, StoreMutation.linearReductionLimit, StoreMutation.linearReductionLimit + 1, 40])
    func reductionFindsEveryRowOnBothSidesOfTheHashingThreshold(rows: Int) {
        // Each row written three times, in rounds, so that rewrites come both before and after
        // the reduction starts hashing; the reference is a plain dictionary of last writes.
        let batches = (1...3).map { round in
            (0..<rows).map { row in StoreMutation.putSetting(key: "k\(row)", value: .int(round * 100 + row)) }
        }
        let reduced = StoreMutation.reduced(batches)
        #expect(reduced == (0..<rows).map { .putSetting(key: "k\($0)", value: .int(300 + $0)) })
    }

    @Test func emptyCommitsSucceedWithoutATransaction() async throws {
        let directory = TemporaryDirectory()
        let store = try IslandStore.open(directory: directory.path)
        let writer = StoreWriter(store: store)
        defer { writer.close() }
        try await writer.commit([])
        try writer.commitNow([])
        #expect(writer.transactionCount == 0)
    }
}
