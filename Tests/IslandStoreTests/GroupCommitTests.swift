import Foundation
import Synchronization
import OrderedJSON
import OrderedCollections
import Testing

@testable import IslandStore

@Suite struct GroupCommitTests {
    @Test func tenThousandConcurrentCommitsShareFewTransactions() async throws {
        let directory = TemporaryDirectory()
        let calls = 10_000
        do {
            let store = try IslandStore.open(directory: directory.path)
            let writer = StoreWriter(store: store)
            try await withThrowingTaskGroup(of: Void.self) { group in
                for i in 0..<calls {
                    group.addTask {
                        try await writer.commit([
                            .putActivity(id: "a\(i)", app: "org.example.App", state: "active", body: ["n": .int(i)])
                        ])
                    }
                }
                try await group.waitForAll()
            }
            // Every call has returned, so every one of them is in a committed transaction.
            #expect(writer.transactionCount >= 1)
            #expect(writer.transactionCount <= calls / 10, "group commit should merge most calls")
            writer.close()
            try store.close()
        }
        let reopened = try IslandStore.open(directory: directory.path)
        let state = try reopened.load()
        #expect(state.activities.count == calls)
        #expect(Set(state.activities.map(\.id)) == Set((0..<calls).map { "a\($0)" }))
        #expect(state.activities.allSatisfy { $0.body == ["n": .int(Int($0.id.dropFirst())!)] })
    }

    @Test func aFailedTransactionFailsEveryCallerInItsGroup() async throws {
        let directory = TemporaryDirectory()
        let store = try IslandStore.open(directory: directory.path)
        let writer = StoreWriter(store: store)
        defer { writer.close() }
        // A write the database refuses, standing in for a full disk or an I/O error.
        try store.execute(
            sql: """
                CREATE TRIGGER poison BEFORE INSERT ON activities WHEN NEW.app = 'poison'
                BEGIN SELECT RAISE(ABORT, 'injected failure'); END
                """)

        let callers = 50
        writer.setPaused(true)
        let outcomes = Task {
            await withTaskGroup(of: StoreError?.self) { group in
                for i in 0..<callers {
                    group.addTask {
                        do throws(StoreError) {
                            let app = i == 17 ? "poison" : "org.example.App"
                            try await writer.commit([.putActivity(id: "a\(i)", app: app, state: "active", body: [:])])
                            return nil
                        } catch {
                            return error
                        }
                    }
                }
                return await group.reduce(into: [StoreError?]()) { $0.append($1) }
            }
        }
        while writer.pendingCount < callers {
            try await Task.sleep(for: .milliseconds(1))
        }
        writer.setPaused(false)

        let errors = await outcomes.value
        #expect(errors.count == callers)
        #expect(errors.allSatisfy { $0?.kind == .writeFailed })
        #expect(errors.allSatisfy { $0?.message.contains("injected failure") == true })
        #expect(errors.allSatisfy { $0?.path == store.path })
        // All or nothing: the innocent callers' mutations were rolled back with the poisoned one.
        #expect(try store.load().activities.isEmpty)
        #expect(writer.transactionCount == 0)

        // The writer survives and serves the next group.
        try await writer.commit([.putActivity(id: "later", app: "org.example.App", state: "active", body: [:])])
        #expect(try store.load().activities.map(\.id) == ["later"])
    }

    @Test func closeDrainsPendingCommitsThenRefusesMore() async throws {
        let directory = TemporaryDirectory()
        let store = try IslandStore.open(directory: directory.path)
        let writer = StoreWriter(store: store)

        writer.setPaused(true)
        let callers = 100
        let commits = Task {
            try await withThrowingTaskGroup(of: Void.self) { group in
                for i in 0..<callers {
                    group.addTask { try await writer.commit([.putSetting(key: "k\(i)", value: .int(i))]) }
                }
                try await group.waitForAll()
            }
        }
        while writer.pendingCount < callers {
            try await Task.sleep(for: .milliseconds(1))
        }
        writer.close()  // overrides the pause: closing always drains
        try await commits.value
        #expect(try store.load().settings.count == callers)

        await #expect(throws: StoreError.self) {
            try await writer.commit([.putSetting(key: "late", value: true)])
        }
        do {
            try writer.commitNow([.putSetting(key: "late", value: true)])
            Issue.record("commitNow after close succeeded")
        } catch {
            #expect(error.kind == .closed)
        }
        #expect(try store.load().settings["late"] == nil)
    }

    @Test func writesAfterTheStoreIsClosedFail() async throws {
        let directory = TemporaryDirectory()
        let store = try IslandStore.open(directory: directory.path)
        let writer = StoreWriter(store: store)
        defer { writer.close() }
        try store.close()
        do {
            try await writer.commit([.putSetting(key: "k", value: 1)])
            Issue.record("commit to a closed database succeeded")
        } catch {
            #expect(error.kind == .closed)
            #expect(error.description.hasPrefix(store.path + ": "))
        }
    }

    /// The daemon rereads the store after a failed commit, also when the commit failed because
    /// the store was closed (a daemon stopping, a test's in-process daemon torn down): that
    /// read must fail, not hand SQLite the closed connection's null handle.
    @Test func readsAfterTheStoreIsClosedFail() throws {
        let directory = TemporaryDirectory()
        let store = try IslandStore.open(directory: directory.path)
        try StoreWriter(store: store).commitNow([.putSetting(key: "k", value: 1)])
        try store.close()
        #expect(throws: StoreError(.closed, path: store.path, message: "the database is closed")) { try store.load() }
    }
}

@Suite struct CallbackCommitTests {
    @Test func callbacksRunOnceEachInQueueOrderAfterTheirCommit() async throws {
        let directory = TemporaryDirectory()
        let store = try IslandStore.open(directory: directory.path)
        let writer = StoreWriter(store: store)
        defer { writer.close() }
        let seen = Mutex<[Int]>([])

        for i in 0..<1000 {
            writer.commit([.putSetting(key: "k\(i)", value: .int(i))]) { result in
                if case .success = result { seen.withLock { $0.append(i) } }
            }
        }
        // Queue order: once a later commit returns, every earlier callback has run.
        try await writer.commit([])
        #expect(seen.withLock { $0 } == Array(0..<1000))
        #expect(try store.load().settings.count == 1000)

        writer.close()
        let refused = Mutex<StoreError?>(nil)
        writer.commit([.putSetting(key: "late", value: 1)]) { result in
            if case .failure(let error) = result { refused.withLock { $0 = error } }
        }
        #expect(refused.withLock { $0 }?.kind == .closed)
    }
}

/// A commit may say it need not wait for the disk (a broadcast channel's message nobody is
/// told of, docs/design.md §8): a group of such commits is written with `synchronous =
/// NORMAL`, and one commit that needs the disk makes its whole group `FULL`.
@Suite struct SyncingCommitTests {
    private func commit(_ writer: StoreWriter, _ key: String, syncing: Bool) async throws {
        let result = await withCheckedContinuation { continuation in
            writer.commit([.putSetting(key: key, value: .string(key))], syncing: syncing) { continuation.resume(returning: $0) }
        }
        try result.get()
    }

    @Test func aGroupSyncsUnlessNoneOfItsCommitsNeedsTheDisk() async throws {
        let directory = TemporaryDirectory()
        let store = try IslandStore.open(directory: directory.path)
        let writer = StoreWriter(store: store)
        #expect(try store.pragma("synchronous") == "2")  // FULL

        try await commit(writer, "unsynced", syncing: false)
        #expect(try store.pragma("synchronous") == "1")  // NORMAL
        try await commit(writer, "synced", syncing: true)
        #expect(try store.pragma("synchronous") == "2")
        try await writer.commit([.putSetting(key: "awaited", value: true)])  // `commit` async: always synced
        #expect(try store.pragma("synchronous") == "2")

        // One group: two that need not sync and one that must.
        try await commit(writer, "unsynced again", syncing: false)
        writer.setPaused(true)
        let group = Task {
            try await withThrowingTaskGroup(of: Void.self) { tasks in
                for (index, syncing) in [false, true, false].enumerated() {
                    tasks.addTask { try await self.commit(writer, "grouped \(index)", syncing: syncing) }
                }
                try await tasks.waitForAll()
            }
        }
        while writer.pendingCount < 3 {
            try await Task.sleep(for: .milliseconds(1))
        }
        let transactions = writer.transactionCount
        writer.setPaused(false)
        try await group.value
        #expect(writer.transactionCount == transactions + 1)
        #expect(try store.pragma("synchronous") == "2")

        // Every one is there, synced or not, after the writer and the store close.
        writer.close()
        try store.close()
        let settings = try IslandStore.open(directory: directory.path).load().settings
        #expect(Set(settings.keys) == ["unsynced", "synced", "awaited", "unsynced again", "grouped 0", "grouped 1", "grouped 2"])
    }
}
