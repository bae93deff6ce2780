import Glibc
import ProcessTesting
import SpawnDescriptors
import Testing

/// A spawned child keeps the descriptors it is given and no others, even those opened without
/// close-on-exec, as SwiftNIO opens its sockets.
@Suite struct SpawnDescriptorsTests {
    /// Two sockets opened as SwiftNIO opens them, without close-on-exec, at numbers of the
    /// test's choosing (one above the other).
    static func leakyPair() throws -> (low: Int32, high: Int32) {
        let low = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        let high = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        try #require(low >= 0 && high >= 0)
        return (min(low, high), max(low, high))
    }

    /// Runs `/bin/sh -c script` with `actions` and returns its exit status.
    static func run(_ script: String, _ configure: (inout posix_spawn_file_actions_t) -> Void) async throws -> Int32 {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        configure(&actions)
        let arguments: [String] = ["/bin/sh", "-c", script]
        let argv = arguments.map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var pid: pid_t = 0
        try #require(posix_spawn(&pid, "/bin/sh", &actions, nil, argv, environ) == 0)
        // Reaped on a thread of its own: `waitpid` blocks until the shell has run.
        return await offThePool { [pid] in
            var status: Int32 = 0
            while waitpid(pid, &status, 0) == -1 && errno == EINTR {}
            return (status >> 8) & 0xff
        }
    }

    /// `/bin/sh` exits 0 when `open` are open in it and `closed` are not.
    static func script(open: [Int32], closed: [Int32]) -> String {
        (open.map { "[ -e /proc/$$/fd/\($0) ]" } + closed.map { "! [ -e /proc/$$/fd/\($0) ]" }).joined(separator: " && ")
    }

    @Test func withoutTheActionsAChildInheritsWhatIsNotCloseOnExec() async throws {
        // The test's own check can fail: a plain spawn hands both on.
        let (low, high) = try Self.leakyPair()
        defer { close(low); close(high) }
        #expect(try await Self.run(Self.script(open: [low, high], closed: [])) { _ in } == 0)
    }

    @Test func closeFromClosesEveryDescriptorFromItsFirstUp() async throws {
        let (low, high) = try Self.leakyPair()
        defer { close(low); close(high) }
        #expect(try await Self.run(Self.script(open: [], closed: [low, high])) { SpawnDescriptors.closeFrom(3, in: &$0) } == 0)
        #expect(try await Self.run(Self.script(open: [low], closed: [high])) { SpawnDescriptors.closeFrom(high, in: &$0) } == 0)
    }

    @Test func closeAllButKeepsOnlyWhatItIsGiven() async throws {
        let (low, high) = try Self.leakyPair()
        defer { close(low); close(high) }
        #expect(try await Self.run(Self.script(open: [high], closed: [low])) { SpawnDescriptors.closeAll(but: [high], in: &$0) } == 0)
        #expect(try await Self.run(Self.script(open: [low], closed: [high])) { SpawnDescriptors.closeAll(but: [low], in: &$0) } == 0)
    }

    @Test func openNowListsADescriptorOpenedAndNotOneClosed() throws {
        let (low, pairHigh) = try Self.leakyPair()
        defer { close(low) }
        // The closed one far above every descriptor in use: the tests running beside this one
        // open descriptors too, each taking the lowest number free, and one of theirs took the
        // number just closed here (under `stress-ng --cpu 4`, 2026-12-07).
        var limit = rlimit()
        try #require(getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0)
        let high = fcntl(pairHigh, F_DUPFD, Int32(min(limit.rlim_cur, 4096) - 1))
        close(pairHigh)
        try #require(high > low)
        #expect(SpawnDescriptors.openNow().isSuperset(of: [low, high]))
        close(high)
        #expect(!SpawnDescriptors.openNow().contains(high))
    }
}
